"""Run folders to judge: a tiny one built by hand (results.json as flows writes it, tiny dashboards),
a small real one (heuristic rollouts of a bundled app) and hand-made ones whose final page text
and expected outcome a test chooses."""

from __future__ import annotations

import io
import shutil
from pathlib import Path

import pytest
from PIL import Image

from apps_prompts import load_app, reference_html_path
from cua import RolloutConfig, TerminationReason, Trajectory, rollout
from cua.policies import get_policy
from dashboard_render import DASHBOARD_FILE, render_dashboard
from results import AppRoundResult, TaskOutcome, write_results
from tests.trajectories import synthetic_trajectory
from verifier import rollout_checker

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


# ---- real and hand-made trajectories, for the judges ----

APP = "unit-converter"
# A success, a failure, and a failure whose expected outcome's one fact ("—") is on the page anyway.
TASKS = ("miles-to-km", "swap-to-feet-metres", "below-absolute-zero")
ROLLOUTS = Path("apps", APP, "offline", "round-0", "rollouts", "heuristic")


def write_run(run_dir: Path, app_id: str, outcomes: list[TaskOutcome]) -> Path:
    """results.json (and .csv/.md) for one app version judged by the heuristic agent."""
    result = AppRoundResult(app_id=app_id, domain="tool", coder="offline", cua="heuristic", mode="integrated", round=0,
                            html=f"apps/{app_id}/v0.html", html_sha="0" * 64, tasks=outcomes)
    write_results(run_dir, [result])
    return run_dir


def outcome_of(run_dir: Path, folder: Path, trajectory: Trajectory) -> TaskOutcome:
    render_dashboard(folder, out=folder / DASHBOARD_FILE)
    return TaskOutcome(task_id=trajectory.task_id, solvable=True, checker_valid=True, success=trajectory.success,
                       termination=trajectory.termination.value, steps=len(trajectory.steps),
                       trajectory=folder.relative_to(run_dir).as_posix(),
                       dashboard=(folder / DASHBOARD_FILE).relative_to(run_dir).as_posix())


@pytest.fixture(scope="session")
async def real_run_template(tmp_path_factory) -> Path:
    """Real heuristic rollouts of three unit-converter tasks in a run folder (built once; copy before changing)."""
    run_dir = tmp_path_factory.mktemp("real-run")
    app = load_app(APP)
    html = reference_html_path(app).read_text(encoding="utf-8")
    outcomes = []
    for task_id in TASKS:
        task = app.task(task_id)
        folder = run_dir / ROLLOUTS / task_id
        trajectory = await rollout(html, task.description, get_policy("heuristic"), rollout_checker(task.checker), folder,
                                   RolloutConfig(max_steps=8), app_id=APP, task_id=task_id,
                                   expected_outcome=task.expected_outcome)
        outcomes.append(outcome_of(run_dir, folder, trajectory))
    return write_run(run_dir, APP, outcomes)


@pytest.fixture
def real_run(real_run_template, tmp_path) -> Path:
    """A copy of the real run folder this test may change."""
    return Path(shutil.copytree(real_run_template, tmp_path / "run"))


def make_run(run_dir: Path, cases: list[dict]) -> Path:
    """A run folder of synthetic trajectories (painted screenshots), one per case:
    `{"task_id", "expected_outcome", "final_text", "success"}` and optionally "task" and "steps"
    (final_text may be None: a rollout recorded before it was kept)."""
    outcomes = []
    for case in cases:
        folder = run_dir / "apps" / "fake-app" / "offline" / "round-0" / "rollouts" / "scripted" / case["task_id"]
        trajectory = synthetic_trajectory(folder, case.get("steps", 3), success=case["success"], task=case.get("task"))
        trajectory = trajectory.model_copy(update={
            "task_id": case["task_id"], "expected_outcome": case["expected_outcome"],
            "final_text": case["final_text"],
            "termination": TerminationReason.success if case["success"] else TerminationReason.finished,
        })
        trajectory.save(folder)
        outcomes.append(outcome_of(run_dir, folder, trajectory))
    return write_run(run_dir, "fake-app", outcomes)
