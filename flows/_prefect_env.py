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
    # SQLite takes one writer at a time: many app flows writing their cached task runs at once (a resumed
    # 52-app round) got "503 Service Unavailable" (SQLite busy) through the client's default 5 retries; 8
    # (still bounded, ≈ 8.5 min of waits in all) gets more such resumes through. Retries do not cure SQLite's
    # one writer: a large run needs a server on PostgreSQL (docs/benchmarks.md, "Beyond one machine").
    os.environ.setdefault("PREFECT_CLIENT_MAX_RETRIES", "8")
