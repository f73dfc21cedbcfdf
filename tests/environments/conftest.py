"""The room's tests: its browser lives on the room's own event loop thread, closed when the session ends."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session", autouse=True)
def _close_the_rooms_browser_at_end():
    yield
    import environments

    environments.shutdown()
