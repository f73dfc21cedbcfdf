"""A real Prefect server in its own process, on SQLite or on a PostgreSQL cluster of its own, for tests and
benchmarks that need a server other processes reach or a database that takes many writers at once.

SQLite takes one writer at a time: many app flows finishing cached stages at once (a resumed 52-app round)
make Prefect's SQLite server answer "503 Service Unavailable" (database is locked) past the client's retries.
A server on PostgreSQL does not (docs/benchmarks.md, "Beyond one machine").
"""

from __future__ import annotations

import glob
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

BIN = Path(sys.executable).parent


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def client_env(folder: Path, api_url: str) -> dict[str, str]:
    """This process's environment for a client of the server at `api_url`: no other Prefect or pytest
    settings, a Prefect home and a model cache in `folder`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PREFECT_", "PYTEST_"))}
    env.update({"PREFECT_HOME": str(folder / "prefect-home"), "PREFECT_API_URL": api_url,
                "PREFECT_SERVER_ANALYTICS_ENABLED": "false", "DO_NOT_TRACK": "1",
                "AUI_CACHE_DIR": str(folder / "llm-cache"), "COLUMNS": "200"})
    return env


def postgres_installed() -> Path | None:
    """The folder of Debian PostgreSQL's server programs (scripts/install_postgres.sh), or None."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    return Path(found[-1]).parent if found else None


@contextmanager
def postgres_database() -> Iterator[str]:
    """A fresh PostgreSQL cluster on 127.0.0.1 and a free port, run as the `postgres` user when this is root;
    yields its SQLAlchemy URL for Prefect; stopped and removed at the end."""
    bin_dir = postgres_installed()
    if bin_dir is None:
        raise RuntimeError("PostgreSQL is not installed: run scripts/install_postgres.sh (make test does)")
    # Not under a pytest folder: the postgres user must be able to enter it (they are root's, 0700).
    data = Path(tempfile.mkdtemp(prefix="aui-pg-"))
    as_user: list[str] = []
    if os.geteuid() == 0:
        shutil.chown(data, "postgres", "postgres")
        as_user = ["runuser", "-u", "postgres", "--"]
    port = free_port()

    def run(program: str, *args: str, **options) -> None:
        subprocess.run([*as_user, str(bin_dir / program), "-D", str(data / "db"), *args], capture_output=True, **options)

    try:
        run("initdb", "-A", "trust", "-U", "postgres", "--no-sync", check=True, timeout=120)
        run("pg_ctl", "-l", str(data / "server.log"), "-w", "-t", "60", "-o", f"-p {port} -k {data} -c "
            "listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200", "start", check=True, timeout=90)
        yield f"postgresql+asyncpg://postgres@127.0.0.1:{port}/postgres"
    finally:
        run("pg_ctl", "-m", "immediate", "-w", "-t", "30", "stop", timeout=60)
        shutil.rmtree(data, ignore_errors=True)


@contextmanager
def prefect_server(folder: Path, server_env: dict[str, str] | None = None) -> Iterator[tuple[str, dict[str, str]]]:
    """`prefect server start` on a free port (with `server_env` added, e.g. a database URL), its log in
    `folder`; yields (base URL, env for clients); stopped at the end."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = client_env(folder, f"{base}/api")
    log_path = folder / "prefect-server.log"
    with log_path.open("wb") as log:
        server = subprocess.Popen([str(BIN / "prefect"), "server", "start", "--host", "127.0.0.1", "--port", str(port)],
                                  cwd=folder, env={**env, **(server_env or {})}, stdout=log, stderr=subprocess.STDOUT,
                                  start_new_session=True)
        try:
            deadline = time.monotonic() + 240  # ≈ 15 s on a quiet machine with a new database
            while True:
                if server.poll() is not None:
                    raise RuntimeError(f"prefect server exited: {log_path.read_text()[-3000:]}")
                if time.monotonic() > deadline:
                    raise RuntimeError(f"prefect server not healthy within 240 s (its log: {log_path})")
                with suppress(OSError), urllib.request.urlopen(f"{base}/api/health", timeout=5) as response:
                    if response.status == 200:
                        break
                time.sleep(0.5)
            yield base, env
        finally:
            stop_process_group(server)


def stop_process_group(process: subprocess.Popen, grace_s: float = 30.0) -> None:
    """SIGTERM to the session `process` leads (started with `start_new_session=True`), SIGKILL after `grace_s`."""
    stop_process_groups([process], grace_s)


def stop_process_groups(processes: list[subprocess.Popen], grace_s: float = 30.0) -> None:
    """`stop_process_group` for several sessions at once: one grace period for all of them, not one after another
    (a Prefect process worker took its whole 30 s after SIGTERM; two of them in turn kept a test a minute longer)."""
    running = [process for process in processes if process.poll() is None]
    for process in running:
        os.killpg(process.pid, signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    for process in running:
        try:
            process.wait(timeout=max(deadline - time.monotonic(), 0.01))
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=30)
