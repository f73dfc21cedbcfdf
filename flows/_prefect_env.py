"""Prefect settings this project needs, applied before Prefect is imported (it reads them then)."""

from __future__ import annotations

import os
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parents[1]


def configure_prefect_env() -> None:
    """Project-local PREFECT_HOME, no telemetry, and a start-up limit a cold server meets (environment.md)."""
    os.environ.setdefault("PREFECT_HOME", str(PROJECT_ROOT / ".prefect"))
    os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
    os.environ.setdefault("DO_NOT_TRACK", "1")
    os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "120")
    os.environ.setdefault("PREFECT_RESULTS_PERSIST_BY_DEFAULT", "true")
    # SQLite takes one writer at a time. Resuming the full 52-app round (bench/aui_gym_round.py,
    # 2026-11-26) starts 52 app flows whose cached task runs are all written at once: one request got
    # "503 Service Unavailable" (SQLite busy) through the client's default 5 retries (2 + 4 + … + 32 s)
    # and the run failed; with 8 it went through on a late retry (that app's flow began ≈ 8 min after the
    # sweep, 3.5 min after the other 51 had finished) and the re-run ended with 0 model calls. Still
    # bounded (≈ 8.5 min of waits in all). On 2026-11-28 the same resume failed after the 8 retries too,
    # and a toy sweep (52 app flows of 61 no-op cached tasks each) failed on SQLite with the client's
    # retries at 2 whatever the bound (4 app flows at once; one task call at a time) and at 8 after 17 min,
    # while on PostgreSQL it passed with 2: retries and bounds do not cure SQLite's one writer. A large run needs a server on PostgreSQL (docs/benchmarks.md, "Beyond one machine").
    os.environ.setdefault("PREFECT_CLIENT_MAX_RETRIES", "8")



def temporary_server_in_own_session() -> None:
    """Prefect's temporary server (no PREFECT_API_URL), started in a session of its own when the run first needs it.

    A terminal's Ctrl-C is a SIGINT to its whole foreground process group. Prefect starts its temporary server in
    `aui`'s group, so that server died with the first Ctrl-C while the stopping run still had to report its task runs
    to it: the clean stop hung until the grace ran out and the process tree was killed (`flows._stop`), after a
    screenful of "EventsWorker failed to process item". In a session of its own the server hears no terminal signal;
    Prefect stops it at exit as before (a hard stop kills it with the process tree). As Prefect's test harness does,
    it is registered as the process's default server, the one every Prefect client then asks for.
    """
    if os.environ.get("PREFECT_API_URL"):
        return
    import subprocess
    import sys

    import prefect
    from prefect.server.api.server import SubprocessASGIServer
    from prefect.settings import get_current_settings

    class OwnSessionServer(SubprocessASGIServer):
        def _run_uvicorn_command(self) -> subprocess.Popen:
            # Prefect 3.8.8's command and environment (`SubprocessASGIServer._run_uvicorn_command`), in a new session
            return subprocess.Popen(
                [sys.executable, "-m", "uvicorn", "--app-dir", str(prefect.__module_path__.parent), "--factory",
                 "prefect.server.api.server:create_app", "--host", "127.0.0.1", "--port", str(self.port),
                 "--log-level", "error", "--lifespan", "on"],
                env={**os.environ, "PREFECT_UI_ENABLED": "0", "PREFECT__SERVER_EPHEMERAL": "1",
                     "PREFECT__SERVER_FINAL": "1", **get_current_settings().to_environment_variables(exclude_unset=True)},
                start_new_session=True)

    current = SubprocessASGIServer._instances.get(None)
    if current is None or not current.running:
        server = object.__new__(OwnSessionServer)  # not `OwnSessionServer()`: that returns the registered one
        server.__init__(None)
        SubprocessASGIServer._instances[None] = server
