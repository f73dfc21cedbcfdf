"""A run stopped by Prefect's busy SQLite database (503) says what to do; other failures do not get that line."""

from __future__ import annotations

import httpx
from prefect.exceptions import PrefectHTTPStatusError
from prefect.settings import PREFECT_API_DATABASE_CONNECTION_URL, PREFECT_API_URL, temporary_settings

from aui._run import _busy_database_hint


def _status(code: int) -> PrefectHTTPStatusError:
    request = httpx.Request("POST", "http://127.0.0.1:4200/api/task_runs/")
    return PrefectHTTPStatusError(f"Server error '{code}'", request=request, response=httpx.Response(code, request=request))


def test_a_503_on_sqlite_points_at_a_server_on_postgres_and_nothing_else_does():
    with temporary_settings(updates={PREFECT_API_URL: None}):  # the ephemeral server: SQLite
        hint = _busy_database_hint(_status(503))
        assert "PostgreSQL" in hint and "Beyond one machine" in hint
        assert _busy_database_hint(_status(500)) == ""
        assert _busy_database_hint(RuntimeError("503")) == ""
    with temporary_settings(updates={PREFECT_API_URL: "http://127.0.0.1:4200/api",
                                     PREFECT_API_DATABASE_CONNECTION_URL: "postgresql+asyncpg://db/prefect"}):
        assert _busy_database_hint(_status(503)) == ""
