"""The verifier's entry points: one app version in, `AppVerdicts` (and `verdicts.json`) out; one spec task
in, whether its reference checker, answer check and solution agree with its app (`prove_task`).

Verifiers are looked up by name: "offline" puts the spec's reference checkers through the gate;
any other name is a model (or role) of the model registry, judged by the LLM verifier — unless
the registry marks it offline, in which case the offline path is taken as well.

Proving a spec's tasks solvable (checker false at load, true after the reference solution) is how we
know the bundled apps, tasks and reference checkers agree before any agent is judged by them (`aui
apps validate`). The replay is `_proof`'s, the one every verifier uses. A task's answer check is
proven too: after the reference solution on a fresh page, the expected answer must be readable in
the page's visible text. A task may have only an answer check (then an empty solution means the
answer shows at load); judge checks cannot be proven before a rollout and are left alone.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from apps_prompts import AppSpec, Task, reference_html_path
from cua import BrowserConfig
from llm import get_client

from ._attempts import Candidate, attempt_all, unsupported_verdict, verdict_from_attempt, with_judge_checks
from ._llm import LLMVerifierConfig, judge_app
from ._proof import gate_and_prove, prove_answer
from ._prompts import PROMPT_VERSION
from ._verdicts import OFFLINE, AppVerdicts, TokenTotals, Verdict, html_sha256, write_verdicts

if TYPE_CHECKING:
    from llm import ModelClient


async def verify_app(
    spec: AppSpec,
    html: str | None = None,
    verifier: str = OFFLINE,
    *,
    client: ModelClient | None = None,
    config: LLMVerifierConfig | None = None,
    browser: BrowserConfig | None = None,
    out_dir: Path | str | None = None,
) -> AppVerdicts:
    """Judge every task of `spec` against `html` (default: the spec's reference HTML).

    `verifier` is "offline" or a model name / role of `client`'s registry (`llm.ModelClient`;
    default `llm.get_client()`). With `out_dir`, `verdicts.json` is written there atomically.

    Raises:
        ValueError: no `html` was given and the spec has no reference HTML.
        llm.UnknownModelError: `verifier` is neither "offline" nor known to the registry.
        llm.ModelCallError: a model call failed for good (after the client's retries).
    """
    html = _html_for(spec, html)
    started = time.monotonic()
    model_name = OFFLINE
    if verifier != OFFLINE:
        client = client or get_client()
        if not client.registry.is_offline(verifier):
            model_name = client.registry.model_name(verifier)

    if model_name == OFFLINE:
        verdicts, tokens = await reference_verdicts(spec, html, browser=browser)
    else:
        verdicts, tokens = await judge_app(client, model_name, spec, html, config=config, browser=browser)

    result = AppVerdicts(
        app_id=spec.id,
        domain=spec.domain.value,
        html_sha256=html_sha256(html),
        verifier=model_name,
        offline=model_name == OFFLINE,
        prompt_version=None if model_name == OFFLINE else PROMPT_VERSION,
        verdicts=verdicts,
        tokens=tokens,
        elapsed_s=round(time.monotonic() - started, 3),
    )
    if out_dir is not None:
        write_verdicts(result, out_dir)
    return result


async def reference_verdicts(
    spec: AppSpec,
    html: str,
    *,
    browser: BrowserConfig | None = None,
) -> tuple[list[Verdict], TokenTotals]:
    """The offline verifier: each task's reference checker (and answer check) through the same gate and proofs as a model's.

    The spec's reference solution is what is replayed, so a task whose checker and solution agree
    with `html` (and whose expected answer is readable on the page after it) ends "proven"; one
    without a solution "claimed"; one with neither a checker nor an answer check "unsupported". A
    task with only an answer check may have an empty solution: its answer shows at load.
    """
    candidates = {
        task.id: Candidate(
            source=task.checker,
            solution=tuple(task.solution),
            solution_error=None if task.solution or not task.checker else "the spec gives no reference solution for this task",
            answer=task.answer_check,
        )
        for task in spec.tasks if task.checker or task.answer_check
    }
    attempts = await attempt_all(html, candidates, browser=browser)
    verdicts = []
    for task in spec.tasks:
        attempt = attempts.get(task.id)
        if attempt is None:
            verdict = unsupported_verdict(task.id, "the spec has no reference checker or answer check for this task "
                                          "(the offline verifier uses only those)", model=OFFLINE, offline=True)
        else:
            gate = attempt.gate
            reason = "the spec's answer check (no DOM checker)" if gate is None else "reference checker passed the gate"
            verdict = verdict_from_attempt(task.id, attempt, model=OFFLINE, offline=True, reason=reason)
            if gate is not None and not gate.accepted:  # the gate's reason alone
                verdict.reasons = [f"reference checker failed the validation gate: {gate.reason}"]
        verdicts.append(with_judge_checks(verdict, task))
    return verdicts, TokenTotals()


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


def _html_for(spec: AppSpec, html: str | None) -> str:
    if html is not None:
        return html
    path = reference_html_path(spec)
    if path is None:
        raise ValueError(f"app '{spec.id}' has no reference_html; pass the HTML of the app version to verify")
    return Path(path).read_text(encoding="utf-8")
