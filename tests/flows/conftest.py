"""A real `prefect server start` on a free port, for tests that need a server other processes reach."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

BIN = Path(sys.executable).parent


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _env(tmp_path: Path, api_url: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PREFECT_", "PYTEST_"))}
    env.update({"PREFECT_HOME": str(tmp_path / "prefect-home"), "PREFECT_API_URL": api_url,
                "PREFECT_SERVER_ANALYTICS_ENABLED": "false", "DO_NOT_TRACK": "1",
                "AUI_CACHE_DIR": str(tmp_path / "llm-cache"), "COLUMNS": "200"})
    return env


@pytest.fixture(scope="session")
def prefect_ui(tmp_path_factory):
    """`prefect server start` on a free port, shared by the tests that need one (each starts in ≈ 15 s;
    their runs have names of their own); yields (base URL, env for clients); stopped at the end."""
    yield from prefect_server_process(tmp_path_factory.mktemp("prefect-ui"))


def prefect_server_process(tmp_path: Path, server_env: dict[str, str] | None = None):
    """`prefect server start` on a free port (with `server_env` added, e.g. a database URL); yields
    (base URL, env for clients); stopped at the end."""
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    env = _env(tmp_path, f"{base}/api")
    log = (tmp_path / "prefect-server.log").open("wb")
    server = subprocess.Popen([str(BIN / "prefect"), "server", "start", "--host", "127.0.0.1", "--port", str(port)],
                              cwd=tmp_path, env={**env, **(server_env or {})}, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + 240  # ≈ 15 s on a quiet machine with a new database
        while True:
            assert server.poll() is None, (tmp_path / "prefect-server.log").read_text()[-3000:]
            assert time.monotonic() < deadline, "prefect server not healthy within 240 s"
            try:
                with urllib.request.urlopen(f"{base}/api/health", timeout=5) as response:
                    if response.status == 200:
                        break
            except OSError:
                pass
            time.sleep(0.5)
        yield base, env
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait(timeout=30)
        log.close()


@pytest.fixture()
def postgres_url(tmp_path):
    """A fresh PostgreSQL cluster (Debian's server: scripts/install_postgres.sh) on 127.0.0.1 and a free port,
    run as the `postgres` user when this is root; yields its SQLAlchemy URL for Prefect; stopped and removed at the end."""
    import glob
    import shutil
    import tempfile

    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    if not found:
        pytest.fail("PostgreSQL is not installed: run scripts/install_postgres.sh (make test does)")
    bin_dir = Path(found[-1]).parent
    # Not under tmp_path: the postgres user must be able to enter it (pytest's folders are root's, 0700).
    data = Path(tempfile.mkdtemp(prefix="aui-pg-"))
    as_user: list[str] = []
    if os.geteuid() == 0:
        shutil.chown(data, "postgres", "postgres")
        as_user = ["runuser", "-u", "postgres", "--"]
    port = _free_port()
    log = data / "server.log"
    try:
        subprocess.run([*as_user, str(bin_dir / "initdb"), "-D", str(data / "db"), "-A", "trust", "-U", "postgres",
                        "--no-sync"], check=True, capture_output=True, timeout=120)
        subprocess.run([*as_user, str(bin_dir / "pg_ctl"), "-D", str(data / "db"), "-l", str(log), "-w", "-t", "60",
                        "-o", f"-p {port} -k {data} -c listen_addresses=127.0.0.1 -c fsync=off", "start"],
                       check=True, capture_output=True, timeout=90)
        yield f"postgresql+asyncpg://postgres@127.0.0.1:{port}/postgres"
    finally:
        subprocess.run([*as_user, str(bin_dir / "pg_ctl"), "-D", str(data / "db"), "-m", "immediate", "-w", "-t", "30",
                        "stop"], capture_output=True, timeout=60)
        shutil.rmtree(data, ignore_errors=True)


@pytest.fixture()
def prefect_on_postgres(tmp_path, postgres_url):
    """`prefect server start` backed by the PostgreSQL of `postgres_url`; yields (base URL, env for clients)."""
    yield from prefect_server_process(tmp_path, {"PREFECT_API_DATABASE_CONNECTION_URL": postgres_url})
