"""A real (test-harness) Prefect server for the flow tests, shared by the session."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def prefect_server():
    from prefect.testing.utilities import prefect_test_harness

    # A cold ephemeral server took 18–20 s here; Prefect's default limit is 20 s (environment.md).
    with prefect_test_harness(server_startup_timeout=120):
        yield
