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
