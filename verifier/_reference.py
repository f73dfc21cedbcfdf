"""Proving a spec's tasks solvable: checker passes the gate at load, true after the reference solution.

This is how we know the bundled apps, tasks and reference checkers agree before any agent is
judged by them (`aui apps validate`). The replay itself is `_proof`'s, the one every verifier uses.
A task's answer check is proven too: after the reference solution on a fresh page, the expected
answer must be readable in the page's visible text (`_proof`). A task may have only an answer
check (then an empty solution means the answer shows at load); judge checks cannot be proven before
a rollout and are left alone.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from apps_prompts import Task
from cua import BrowserConfig

from ._proof import gate_and_prove, prove_answer


class TaskProof(BaseModel):
    """Whether one task's checker, answer check and solution agree with its app."""

    app_id: str
    task_id: str
    has_checker: bool = Field(default=True, description="The task has a DOM checker (else only an answer check).")
    false_at_load: bool = False
    true_after_solution: bool = False
    answer_shown: bool | None = Field(
        default=None, description="The expected answer was readable on the page after the solution; None: no answer check.")
    problems: list[str] = Field(default_factory=list)

    @property
    def ok(self) -> bool:
        checker_holds = not self.has_checker or (self.false_at_load and self.true_after_solution)
        return checker_holds and self.answer_shown is not False and not self.problems


async def prove_task(html: str, app_id: str, task: Task, config: BrowserConfig | None = None) -> TaskProof:
    """Load the app fresh, check the checker is false, replay the solution, check it is true; for an answer
    check, replay the solution on another fresh page and read the expected answer in the page's text."""
    proof = TaskProof(app_id=app_id, task_id=task.id, has_checker=bool(task.checker))
    answer = task.answer_check
    if not task.checker and answer is None:
        proof.problems.append("no reference checker or answer check")
        return proof
    if task.checker and not task.solution:
        proof.problems.append("no reference solution")
        return proof
    if task.checker:
        await _prove_checker(proof, html, task, config)
    if answer is not None:
        shown = await prove_answer(html, answer, task.solution, config=config)
        proof.answer_shown = shown.shown
        if not shown.shown:
            proof.problems.append(f"answer check ({answer.match} {answer.expected!r}): {shown.reason}")
    return proof


async def _prove_checker(proof: TaskProof, html: str, task: Task, config: BrowserConfig | None) -> None:
    gate, replay = await gate_and_prove(html, task.checker, task.solution, config=config)
    if gate.javascript is None:  # did not compile
        proof.problems.append(f"checker: {gate.reason}")
        return
    if not gate.accepted:
        proof.false_at_load = gate.initial is not None and gate.initial.ok and not gate.initial.passed
        proof.problems.append(f"checker fails the gate at load: {gate.reason}")
        return
    proof.false_at_load = True
    assert replay is not None  # a gated checker with a solution is always replayed
    proof.true_after_solution = replay.proven
    if not replay.proven:
        if replay.final is not None and replay.final.ok:
            proof.problems.append(f"checker is still false after the reference solution: {replay.reason}")
        else:
            proof.problems.append(replay.reason)
