"""A run's file that does not parse is named with what is wrong in it — the first field and its message, or the JSON
error — not pydantic's headline ("1 validation error for RunResults") alone (`llm.first_problem`)."""

from __future__ import annotations

import pytest

from cua import Trajectory
from results import read_results


def test_a_damaged_results_file_names_the_field_at_fault(tmp_path):
    (tmp_path / "results.json").write_text('{"apps": [{"round": "x"}]}')
    with pytest.raises(ValueError, match=r"results\.json: not a valid results file: apps\.0\.app_id: Field required "
                                         r"\(and \d+ more\)$"):
        read_results(tmp_path)
    (tmp_path / "results.json").write_text("{nope")
    with pytest.raises(ValueError, match=r"not a valid results file: Invalid JSON: key must be a string"):
        read_results(tmp_path)


def test_a_damaged_trajectory_names_the_field_at_fault(tmp_path):
    (tmp_path / "trajectory.json").write_text('{"task": 3}')
    with pytest.raises(ValueError, match=r"trajectory\.json: not a valid trajectory: app_id: Field required "
                                         r"\(and \d+ more\)$"):
        Trajectory.load(tmp_path)
