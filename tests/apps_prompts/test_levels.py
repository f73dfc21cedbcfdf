"""Task levels: the rule, the levels of the bundled and GPT-5 tasks, and older task files that have none."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from apps_prompts import (
    AppSpec, Level, Task, level_above, level_from_solution, load_apps, load_tasks_file, solution_steps,
)

GPT5_TASKS = Path(__file__).parents[2] / "configs" / "gpt5-tasks.yaml"
BUNDLED = [(spec.id, task) for spec in load_apps().raise_for_errors() for task in spec.tasks]
GPT5 = [(app, task) for app in yaml.safe_load(GPT5_TASKS.read_text()) for task in load_tasks_file(GPT5_TASKS, app)]


def task(*actions: str, answer: bool = False) -> Task:
    steps = [{"action": a, "selector": "#x", "value": "1" if a in ("fill", "wait") else None} for a in actions]
    checks = [{"kind": "answer", "expected": "1", "match": "number"}] if answer else []
    return Task(id="t", description="d", expected_outcome="o", solution=steps, checks=checks)


@pytest.mark.parametrize(("actions", "answer", "level"), [
    ((), False, Level.paper),
    (("click",), False, Level.paper),
    (("click",), True, Level.wood),  # the answer is a step
    (("fill", "click"), False, Level.wood),
    (("click",) * 3, False, Level.wood),
    (("click",) * 4, False, Level.bronze),
    (("click",) * 6, False, Level.bronze),
    (("click",) * 6, True, Level.silver),
    (("click",) * 10, False, Level.silver),
    (("click",) * 11, False, Level.gold),
    (("click", "wait"), False, Level.gold),  # waiting out the app's timer
], ids=lambda value: str(value)[:30])
def test_the_rule_counts_the_solutions_steps_and_the_answer(actions, answer, level):
    assert level_from_solution(task(*actions, answer=answer)) == level
    assert solution_steps(task(*actions, answer=answer)) == len(actions) + answer


def test_one_level_up_stops_at_gold():
    assert [level_above(level) for level in Level] == [Level.wood, Level.bronze, Level.silver, Level.gold, Level.gold]


@pytest.mark.parametrize(("app", "task"), BUNDLED + GPT5, ids=[f"{a}/{t.id}" for a, t in BUNDLED + GPT5])
def test_every_bundled_and_gpt5_task_has_the_rules_level_or_one_above_with_the_reason(app, task):
    rule = level_from_solution(task)
    assert task.level in (rule, level_above(rule)), f"{task.level} is not the rule's {rule.value} or one above"
    assert task.level_rationale and "\n" not in task.level_rationale
    steps = solution_steps(task)
    assert task.level_rationale.startswith(f"{steps} step{'s' if steps != 1 else ''} (")
    assert f"→ {rule.value}" in task.level_rationale
    if task.level != rule:
        assert "; +1: " in task.level_rationale, "a raised level says why"
    else:
        assert "+1" not in task.level_rationale


def test_the_task_files_use_all_five_levels():
    assert {t.level for _, t in BUNDLED} == set(Level)
    assert {t.level for _, t in GPT5} >= {Level.paper, Level.wood, Level.bronze, Level.gold}


OLD_SPEC = """\
id: old-app
title: Old app
domain: tool
prompt: An app written before the five levels.
tasks:
  - {id: a, description: Press Go, expected_outcome: Done, level: easy}
  - {id: b, description: Press Go twice, expected_outcome: Done, level: medium}
  - {id: c, description: Press Go thrice, expected_outcome: Done, level: hard}
  - {id: d, description: Press Stop, expected_outcome: Stopped}
"""


def test_old_task_files_without_levels_or_with_easy_medium_hard_still_load(tmp_path):
    (tmp_path / "old").mkdir()
    (tmp_path / "old" / "app.yaml").write_text(OLD_SPEC)
    [spec] = load_apps(tmp_path).raise_for_errors()
    assert [(t.level, t.level_rationale) for t in spec.tasks] == [
        (Level.wood, None), (Level.bronze, None), (Level.silver, None), (None, None)]
    tasks_file = tmp_path / "tasks.yaml"
    tasks_file.write_text("old-app:\n  - {id: a, description: Press Go, expected_outcome: Done, level: hard}\n"
                          "  - {id: b, description: Press Stop, expected_outcome: Stopped}\n")
    assert [t.level for t in load_tasks_file(tasks_file, "old-app")] == [Level.silver, None]
    assert AppSpec.model_validate(yaml.safe_load(OLD_SPEC)).tasks[0].level == Level.wood
