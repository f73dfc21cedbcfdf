"""Shared fixtures: synthetic trajectories are built once per session and only read by tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from .builders import synthetic_trajectory


@pytest.fixture(scope="session")
def synthetic(tmp_path_factory):
    """`synthetic(steps, success=False) -> Path`: a cached synthetic trajectory folder (do not modify)."""
    cache: dict[tuple[int, bool], Path] = {}

    def build(steps: int, success: bool = False) -> Path:
        key = (steps, success)
        if key not in cache:
            folder = tmp_path_factory.mktemp(f"synthetic-{steps}-{'ok' if success else 'fail'}")
            synthetic_trajectory(folder, steps, success=success)
            cache[key] = folder
        return cache[key]

    return build
