"""A question task whose state the agent reached but whose answer check failed is named `wrong_answer`.

The real loop (plain stages, Chromium) on one bundled question task — vault-cracker's
`hint-odd-or-even`: buy a hint, say whether the code is odd or even — with an agent that is wrong on
purpose: UI-TARS through the real `openai` client against the scripted server, which clicks the hint
button (the reference solution's one step) and then answers "odd" (the code is even). So the test
does not hang on how well the offline heuristic happens to do on this task.
"""

from __future__ import annotations

import json

import yaml

from apps_prompts import load_app
from cua import Trajectory
from experiment import make_config
from flows import sweep_without_prefect
from flows.testing import click_point
from llm.testing import RecordedRequest, Reply, ScriptedOpenAIServer, reply_text

APP, TASK = "vault-cracker", "hint-odd-or-even"
WRONG = "odd"


class ReachesTheStateAndAnswersWrong:
    """UI-TARS replies: a click at `point` on the first turn, then `finished` with the wrong answer."""

    def __init__(self, point: tuple[int, int]):
        self.point = point

    def __call__(self, request: RecordedRequest) -> Reply:
        turns = sum(1 for message in request.json["messages"] if message["role"] == "assistant")
        if turns == 0:
            x, y = self.point
            return reply_text(f"Thought: The hint button.\nAction: click(point='<point>{x} {y}</point>')")
        return reply_text(f"Thought: The hint says what the code is.\nAction: finished(content='{WRONG}')")


async def test_a_reached_state_with_a_failed_answer_is_a_wrong_answer(tmp_path, monkeypatch):
    monkeypatch.setenv("AUI_LLM_CACHE", "off")
    task = next(t for t in load_app(APP).tasks if t.id == TASK)
    assert any(check.kind == "answer" for check in task.checks), "the task asks for an answer"
    assert [step.selector for step in task.solution] == ["#hint-btn"], "the agent's click is the reference solution"
    tasks_file = tmp_path / "tasks.yaml"
    tasks_file.write_text(yaml.safe_dump({APP: [task.model_dump(mode="json", exclude_none=True)]}))
    agent = ReachesTheStateAndAnswersWrong(await click_point(APP, "#hint-btn"))
    with ScriptedOpenAIServer(agent) as server:
        models = tmp_path / "models.yaml"
        models.write_text(yaml.safe_dump({"roles": {"cua": "scripted"}, "models": [
            {"name": "scripted", "provider": "openai-compatible", "model": "scripted-model", "base_url": server.base_url,
             "api_key": "sk-scripted", "timeout_s": 120, "max_retries": 1},
            {"name": "offline", "provider": "offline"}]}), encoding="utf-8")
        config = make_config({"name": "question", "app_ids": [APP], "rounds": 0, "max_steps": 5,
                              "cua_policies": ["uitars"], "models_config": str(models),
                              "tasks_file": str(tasks_file), "out_dir": str(tmp_path / "runs")})
        (result,) = await sweep_without_prefect(config)
    (outcome,) = result.tasks
    trajectory = Trajectory.load(config.run_dir / outcome.trajectory)
    assert trajectory.answer == WRONG and [s.screen_action.kind for s in trajectory.steps] == ["click", "finished"], \
        json.dumps([s.raw_text for s in trajectory.steps])
    checks = {check.kind: check.passed for check in outcome.checks}
    assert checks == {"dom": True, "answer": False}, outcome.checks
    assert not outcome.success and outcome.failure_modes == ["wrong_answer"]
