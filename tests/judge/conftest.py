"""A tiny finished run folder built by hand: results.json as flows writes it, tiny dashboards."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from PIL import Image

from flows import AppRoundResult, TaskOutcome, write_results

# task → (checker valid, checker success); t8's task has no valid checker, so the checker has no say on it.
CHECKER = {"t1": (True, True), "t2": (True, True), "t3": (True, True), "t4": (True, False),
           "t5": (True, False), "t6": (True, False), "t7": (True, False), "t8": (False, False)}


def trajectory_id(task: str) -> str:
    return f"apps/todo/offline/round-0/rollouts/heuristic/{task}"


def dashboard_of(task: str) -> str:
    return f"{trajectory_id(task)}/dashboard.png"


def _tiny_png() -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (4, 3), (200, 30, 30)).save(buffer, format="PNG")
    return buffer.getvalue()


def build_run(run_dir: Path) -> Path:
    """One app, one round, one CUA, the eight tasks of CHECKER, each with a trajectory and a dashboard."""
    tasks = []
    png = _tiny_png()
    for task, (valid, success) in CHECKER.items():
        (run_dir / trajectory_id(task)).mkdir(parents=True)
        (run_dir / dashboard_of(task)).write_bytes(png)
        tasks.append(TaskOutcome(task_id=task, solvable=valid, checker_valid=valid, success=success,
                                 termination="success" if success else "max_steps", steps=3,
                                 trajectory=trajectory_id(task), dashboard=dashboard_of(task),
                                 reason=None if valid else "no checker passed the gate"))
    result = AppRoundResult(app_id="todo", domain="app", coder="offline", cua="heuristic", mode="integrated",
                            round=0, html="apps/todo/offline/round-0/app.html", html_sha="0" * 64, tasks=tasks)
    write_results(run_dir, [result], usage={}, offline_roles=["coder"])
    return run_dir


@pytest.fixture()
def tiny_run(tmp_path) -> Path:
    return build_run(tmp_path / "run")
