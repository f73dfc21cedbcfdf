"""A question task whose state the agent reached but whose answer check failed is named `wrong_answer`.

The real loop (plain stages, Chromium, the offline heuristic) on one bundled question task the
heuristic reaches but does not answer: vault-cracker's `hint-odd-or-even` (in bench/variations.py it
failed this way in every variation and repeat, and no other mode named it).
"""

from __future__ import annotations

import yaml

from apps_prompts import load_app
from flows import make_config, sweep_without_prefect

APP, TASK = "vault-cracker", "hint-odd-or-even"


async def test_a_reached_state_with_a_failed_answer_is_a_wrong_answer(tmp_path):
    task = next(t for t in load_app(APP).tasks if t.id == TASK)
    assert any(check.kind == "answer" for check in task.checks), "the task asks for an answer"
    tasks_file = tmp_path / "tasks.yaml"
    tasks_file.write_text(yaml.safe_dump({APP: [task.model_dump(mode="json", exclude_none=True)]}))
    config = make_config({"name": "question", "app_ids": [APP], "rounds": 0, "max_steps": 5,
                          "tasks_file": str(tasks_file), "out_dir": str(tmp_path / "runs")})
    (result,) = await sweep_without_prefect(config)
    (outcome,) = result.tasks
    checks = {check.kind: check.passed for check in outcome.checks}
    assert checks == {"dom": True, "answer": False}, outcome.checks
    assert not outcome.success and outcome.failure_modes == ["wrong_answer"]
