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
