"""Proving answer checks in Chromium: the expected answer readable on the page after the reference solution.

The bundled question tasks through `prove_task` (what `aui apps validate` runs) and the offline
verifier; answer-only tasks, answers that are not shown, and judge checks on a small app of our own.
"""

from __future__ import annotations

import pytest

from apps_prompts import AnswerCheck, JudgeCheck, SolutionStep, Task, load_apps, reference_html_path
from verifier import function_completeness, function_completeness_proven, prove_answer, prove_task, read_verdicts, verify_app

from .conftest import COUNTER_HTML

QUESTIONS = [(spec, task) for spec in load_apps().apps for task in spec.tasks if task.answer_check is not None]


def test_the_bundled_apps_ask_questions_of_every_match_kind_across_at_least_five_apps():
    assert len(QUESTIONS) >= 5 and len({spec.id for spec, _ in QUESTIONS}) >= 5
    kinds = {task.answer_check.match for _, task in QUESTIONS}
    assert kinds == {"exact", "normalized", "regex", "number"}
    assert any(t.answer_check.match == "number" and t.answer_check.tolerance > 0 for _, t in QUESTIONS)
    for _, task in QUESTIONS:
        assert task.solution, f"{task.id}: a question task should need a step first"
        assert task.level is not None and task.level_rationale and "answer" in task.level_rationale


@pytest.mark.parametrize(("spec", "task"), QUESTIONS, ids=[f"{s.id}/{t.id}" for s, t in QUESTIONS])
async def test_each_bundled_question_task_is_proven_and_its_answer_needs_the_step(spec, task):
    html = reference_html_path(spec).read_text(encoding="utf-8")
    proof = await prove_task(html, spec.id, task)  # the route of `aui apps validate`
    assert proof.ok and proof.answer_shown is True, proof.problems
    at_load = await prove_answer(html, task.answer_check, [])
    assert not at_load.shown, f"{task.id}: the answer is already on the page at load ({at_load.detail})"


def counter_task(task_id: str, *, answer: AnswerCheck | None = None, checker: str | None = None, clicks: int = 0,
                 judge: str | None = None) -> Task:
    checks = ([answer] if answer else []) + ([JudgeCheck(kind=judge)] if judge else [])
    return Task(id=task_id, description=f"Task {task_id}", expected_outcome="As asked.", checker=checker, checks=checks,
                solution=[{"action": "click", "selector": "#inc"}] * clicks)


@pytest.fixture
def question_spec(counter_spec):
    return counter_spec.model_copy(update={"tasks": [
        counter_task("read-after-two", answer=AnswerCheck(expected="2", match="number"), clicks=2),
        counter_task("read-the-title", answer=AnswerCheck(expected="Counter", match="exact")),  # shown at load: no steps
        counter_task("wrong-expectation", answer=AnswerCheck(expected="5", match="number"), clicks=2),
        counter_task("three-and-say-four", answer=AnswerCheck(expected="4", match="number"), checker="#count == 3", clicks=3),
        counter_task("three-and-judged", checker="#count == 3", clicks=3, judge="final_screenshot"),
        counter_task("judged-only", judge="flow"),
    ]})


async def test_the_offline_verifier_proves_answer_checks_and_counts_an_answer_only_task_in_fc(question_spec, tmp_path):
    verdicts = await verify_app(question_spec, COUNTER_HTML, out_dir=tmp_path)
    after_two, title, wrong, say_four, judged, judged_only = verdicts.verdicts

    # An answer-only task: valid (its answer check is its checker), proven when the answer shows after the steps.
    assert after_two.valid and after_two.proven and after_two.checker is None and not after_two.checker_valid
    [answer] = after_two.checks
    assert answer.kind == "answer" and answer.proven and answer.source == "spec"
    assert answer.proof_reason == "answer check: the page shows the number 2 (within 0 of 2) after the 2-step solution"
    assert len(after_two.solution) == 2
    assert title.proven and "at load (no solution steps)" in title.checks[0].proof_reason

    # Not shown: still valid (FC), not proven (FC proven), with the reason.
    assert wrong.valid and wrong.proof == "claimed" and not wrong.checks[0].proven
    assert wrong.proof_reason.startswith("answer check: no number within 0 of 5 is on the page (numbers shown: 2")
    # With a DOM checker too: the checker is proven, the answer is not, so the task is not.
    assert say_four.checker_valid and say_four.proof == "claimed" and "within 0 of 4" in say_four.proof_reason

    # Judge checks are carried for scoring; nothing to prove, and they do not lower the task's proof.
    assert judged.proven and [(c.kind, c.proof) for c in judged.checks] == [("final_screenshot", "claimed")]
    assert "a model judge decides after the rollout" in judged.checks[0].proof_reason
    assert not judged_only.valid and judged_only.proof == "unsupported" and [c.kind for c in judged_only.checks] == ["flow"]

    assert function_completeness(verdicts).numerator == 5 and function_completeness_proven(verdicts).numerator == 3
    assert verdicts.checkers().keys() == {"three-and-say-four", "three-and-judged"}
    assert verdicts.answer_checks() == {t: question_spec.task(t).answer_check
                                        for t in ("read-after-two", "read-the-title", "wrong-expectation", "three-and-say-four")}
    assert read_verdicts(tmp_path) == verdicts  # the checks and their proofs are written and read back


async def test_prove_task_fails_an_answer_that_is_not_on_the_page_and_passes_one_that_is(question_spec):
    shown = await prove_task(COUNTER_HTML, "counter", question_spec.task("read-after-two"))
    assert shown.ok and shown.answer_shown and not shown.has_checker
    missing = await prove_task(COUNTER_HTML, "counter", question_spec.task("three-and-say-four"))
    assert not missing.ok and missing.false_at_load and missing.true_after_solution and missing.answer_shown is False
    assert missing.problems == ["answer check (number '4'): no number within 0 of 4 is on the page (numbers shown: 3) "
                                "after the 3-step solution"]
    nothing = await prove_task(COUNTER_HTML, "counter", question_spec.task("judged-only"))
    assert not nothing.ok and nothing.problems == ["no reference checker or answer check"]


async def test_a_solution_step_that_fails_is_the_answer_proofs_reason(counter_html):
    proof = await prove_answer(counter_html, AnswerCheck(expected="1", match="number"),
                               [SolutionStep(action="click", selector="#missing")], step_timeout_ms=500)
    assert not proof.shown and proof.failed_step is not None
    assert proof.reason.startswith("solution step 1 (click #missing) failed") and "no element matches '#missing'" in proof.reason
