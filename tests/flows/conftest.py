"""A real `prefect server start` on a free port, for tests that need a server other processes reach."""

from __future__ import annotations

import pytest

from flows.testing import postgres_database, postgres_installed, prefect_server


@pytest.fixture(scope="session")
def prefect_ui(tmp_path_factory):
    """`prefect server start` on a free port, shared by the tests that need one (each starts in ≈ 15 s;
    their runs have names of their own); yields (base URL, env for clients); stopped at the end."""
    with prefect_server(tmp_path_factory.mktemp("prefect-ui")) as server:
        yield server


@pytest.fixture()
def postgres_url():
    """A fresh PostgreSQL cluster (Debian's server: scripts/install_postgres.sh) on 127.0.0.1 and a free port;
    yields its SQLAlchemy URL for Prefect; stopped and removed at the end."""
    if postgres_installed() is None:
        pytest.fail("PostgreSQL is not installed: run scripts/install_postgres.sh (make test does)")
    with postgres_database() as url:
        yield url


@pytest.fixture()
def prefect_on_postgres(tmp_path, postgres_url):
    """`prefect server start` backed by the PostgreSQL of `postgres_url`; yields (base URL, env for clients)."""
    with prefect_server(tmp_path, {"PREFECT_API_DATABASE_CONNECTION_URL": postgres_url}) as server:
        yield server
