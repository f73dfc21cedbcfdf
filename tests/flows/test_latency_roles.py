"""Every role through the latency server on a real app: the proposer's tasks are proven by the verifier's
checkers and solutions, and the CUA's UI-TARS replies play them in Chromium."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from apps_prompts import load_app, reference_html_path
from experiment import make_config
from flows import sweep
from flows.testing import LATENCY_ROLES, LatencyRoles, plan_apps, role_latencies, role_of, write_latency_models
from llm import Latency
from llm.testing import LatencyOpenAIServer

APP = "unit-converter"


@pytest.mark.timeout(600)
async def test_every_role_answers_for_the_app_and_its_tasks_are_proven_and_played(tmp_path, prefect_server, monkeypatch):
    monkeypatch.setenv("AUI_LLM_CACHE", "off")
    spec = load_app(APP)
    html = Path(reference_html_path(spec)).read_text(encoding="utf-8")
    known = spec.tasks[:2]
    plans = await plan_apps({APP: (html, known)}, count=5)
    made = plans[APP].tasks[2:]
    assert len(made) == 3 and all(t.checker and t.solution for t in made)  # from the page's fields and lists
    roles = LatencyRoles(plans, {APP: spec.prompt_text()})
    latencies = {model: Latency.fixed(0.05) for model in role_latencies()}
    with LatencyOpenAIServer(roles, latencies) as server:
        models = write_latency_models(server, tmp_path / "models.yaml")
        config = make_config({"name": "latency", "app_ids": [APP], "rounds": 0, **LATENCY_ROLES, "tasks_per_app": 5,
                              "max_steps": 6, "out_dir": str(tmp_path / "runs"), "models_config": str(models)})
        (result,) = await sweep(config)
    seen = Counter(role_of(r) for r in server.requests)
    assert seen["unknown"] == 0 and roles.unrecognised == 0
    assert seen["coder"] == 1 and seen["proposer"] == 1 and seen["verifier"] == 1 and seen["uitars"] >= 5
    assert len(result.tasks) == 5
    assert all(t.proof == "proven" for t in result.tasks), [(t.task_id, t.proof, t.proof_reason) for t in result.tasks]
    assert all(t.termination in ("success", "finished", "max_steps", "stuck") for t in result.tasks), \
        [(t.task_id, t.termination, t.reason) for t in result.tasks]
    # A typed value is played at its field (a select is not).
    assert sum(t.success for t in result.tasks) >= 1, \
        "\n".join(_played(t, tmp_path / "runs") for t in result.tasks)


def _played(task, runs: Path) -> str:
    """What a failure shows of a task's rollout: its ending and each step's action, target and error."""
    path = runs / "latency" / task.trajectory / "trajectory.json" if task.trajectory else None
    steps = json.loads(path.read_text())["steps"] if path and path.is_file() else []
    played = [f"  {(s.get('raw_text') or '').splitlines()[-1:]} at {(s.get('screen_action') or {}).get('point')} on "
              f"{(s.get('target') or {}).get('selector')}: checker {s.get('checker_passed')} {s.get('checker_error') or ''} "
              f"{s.get('error') or ''}" for s in steps]
    return "\n".join([f"{task.task_id}: {task.termination} {task.reason or ''}", *played])
