"""Proving a variant before it is used: the tasks it keeps still pass their reference solutions on it.

A variation must keep the app's logic, ids and checked state. Whether it did is shown on the page,
task by task, with the verifier's own replay: on the variant, each task's checker is gated (false
at load) and its reference solution — after the variation's own first steps, such as dismissing
its pop-up — must make it true; an answer check's expected answer must be readable after it. A
task the variant breaks is excluded *for that variant*, with the reason; a task without a
reference solution cannot be proven anywhere and is kept as on the default look, marked unproven.
"""

from __future__ import annotations

import asyncio
import re
import time
from typing import Literal

from pydantic import BaseModel, Field

from cua import BrowserConfig, PageTransform, open_app
from verifier import AppVerdicts, gate_and_prove_all, prove_answer

from ._catalogue import solution_prefix

VariantTaskStatus = Literal["proven", "unproven", "excluded"]


class VariantTask(BaseModel):
    """One task on one variant: kept (proven, or unproven for want of a solution) or excluded, and why."""

    task_id: str
    status: VariantTaskStatus
    reason: str = ""

    @property
    def kept(self) -> bool:
        return self.status != "excluded"


class VariantProof(BaseModel):
    """What a variant of one app version was shown to keep, task by task."""

    variation: str
    transform: str | None = Field(default=None, description="The transform's recorded name (with its seed).")
    transform_sha256: str | None = None
    applied: bool = Field(default=True, description="Its script ran without an error at load.")
    apply_error: str | None = None
    changed: list[dict] = Field(default_factory=list, description="What each content part changed at load ({op, changed}).")
    tasks: list[VariantTask] = Field(default_factory=list, description="The tasks with a valid checker on the default look.")
    elapsed_s: float = 0.0

    @property
    def kept(self) -> list[str]:
        return [t.task_id for t in self.tasks if t.kept]

    @property
    def excluded(self) -> dict[str, str]:
        """Task id → why the variant breaks it."""
        return {t.task_id: t.reason for t in self.tasks if not t.kept}


async def prove_variant(html: str, verdicts: AppVerdicts, variation: str, transform: PageTransform | None,
                        config: BrowserConfig | None = None) -> VariantProof:
    """Replay every task's reference solution on the variant (`transform` applied) and keep the ones that hold.

    Only tasks valid on the default look are considered (the others are rolled out nowhere).
    Never raises for what the app or the transform does; raises only what the browser raises.
    """
    started = time.perf_counter()
    config = (config or BrowserConfig()).model_copy(update={"transform": transform})
    proof = VariantProof(variation=variation, transform=transform.name if transform else None,
                         transform_sha256=transform.sha256 if transform else None)
    valid = [v for v in verdicts.verdicts if v.valid]
    if transform is not None and transform.script:
        await _check_it_applies(html, config, proof)
    if not proof.applied:
        proof.tasks = [VariantTask(task_id=v.task_id, status="excluded", reason=f"the variation did not apply: "
                                   f"{proof.apply_error}") for v in valid]
        return _finish(proof, started)

    prefix = solution_prefix(variation)
    checkers = {v.task_id: (v.checker, [*prefix, *v.solution]) for v in valid if v.checker_valid and v.solution}
    answers = {v.task_id: v.answer_check for v in valid if v.answer_check is not None and (v.solution or not v.checker)}
    proven = await gate_and_prove_all(html, checkers, config=config) if checkers else {}

    async def answer_shown(task_id: str):
        verdict = verdicts.verdict(task_id)
        return task_id, await prove_answer(html, answers[task_id], [*prefix, *verdict.solution], config=config)

    shown = dict(await asyncio.gather(*(answer_shown(task_id) for task_id in answers)))
    # A timeout says the machine was slow, not that the variant broke the task: such proofs get one
    # more try, one at a time, before a task is excluded (and then the reason says it timed out).
    for task_id in [t for t in checkers if _timed_out(_problems(t, proven, shown))]:
        proven[task_id] = (await gate_and_prove_all(html, {task_id: checkers[task_id]}, config=config))[task_id]
    for task_id in [t for t in answers if _timed_out(_problems(t, proven, shown))]:
        shown[task_id] = (await answer_shown(task_id))[1]
    for verdict in valid:
        task_id = verdict.task_id
        problems = _problems(task_id, proven, shown)
        if problems:
            proof.tasks.append(VariantTask(task_id=task_id, status="excluded", reason="; ".join(problems)))
        elif task_id in proven or task_id in shown:
            proof.tasks.append(VariantTask(task_id=task_id, status="proven",
                                           reason="its reference solution passes on the variant"))
        else:
            proof.tasks.append(VariantTask(task_id=task_id, status="unproven",
                                           reason="no reference solution to replay: kept as on the default look, unproven"))
    return _finish(proof, started)


def _problems(task_id: str, proven: dict, shown: dict) -> list[str]:
    """Why the task does not hold on the variant (empty: it holds, or it had nothing to replay)."""
    problems = []
    if task_id in proven:
        gate, replay = proven[task_id]
        if not gate.accepted:
            problems.append(f"checker on the variant: {gate.reason}")
        elif replay is None or not replay.proven:
            problems.append(f"checker on the variant: {replay.reason if replay else 'not replayed'}")
    if task_id in shown and not shown[task_id].shown:
        problems.append(f"answer on the variant: {shown[task_id].reason}")
    return problems


_TIMEOUT = re.compile(r"did not finish within|timed out|Timeout|time limit", re.IGNORECASE)


def _timed_out(problems: list[str]) -> bool:
    return any(_TIMEOUT.search(problem) for problem in problems)


async def _check_it_applies(html: str, config: BrowserConfig, proof: VariantProof) -> None:
    """Load the variant: its script must run without an error (and say what it changed). A script that
    timed out is given a second load (a slow machine), any other failure is final."""
    for attempt in range(2):
        async with open_app(html, config) as app:
            failures = [e for e in app.events.page_errors if e.startswith(f"transform '{proof.transform}'")]
            if not failures:
                report = app.events.transform_report
                proof.applied, proof.apply_error = True, None
                proof.changed = [dict(item) for item in report] if isinstance(report, list) else []
                return
            proof.applied, proof.apply_error = False, failures[0]
            if not _timed_out(failures):
                return


def _finish(proof: VariantProof, started: float) -> VariantProof:
    proof.elapsed_s = round(time.perf_counter() - started, 3)
    return proof
