"""The LLM verifier: a model judges an app's tasks in batches, writing each checker with a solution.

Per batch: one conversation. A reply that is not JSON or breaks the schema gets at most
`format_repairs` re-asks quoting the error. Then every checker is put through the gate on a
fresh copy of the app and, if it passes, its solution is replayed there and the checker run
again (`_proof`); a static reading flags checkers that look like they can never be true. Every
task not proven — rejected by the gate, or its solution missing, failing at a step, or leaving
the checker false — goes into exactly one repair round-trip that says what happened; the
repaired entry is judged again, and the better of the two attempts is kept. A task ends
"proven", "claimed" (a checker that passed the gate, not proven) or "unsupported". Model text
is parsed as JSON and run only as a checker in the browser's isolated world, or as selector
steps in the page — never evaluated in Python.

A question-style task (one whose spec carries an answer check, marked `asks_for_answer` in the
request) may get an answer check from the model, proven by reading the expected answer on the page
after the solution; the model's answer check is kept over the spec's, and without a usable one
the spec's is proven against the model's solution instead. An answer check that could not be used
(a bad regex, no number) goes into the repair round-trip like an unproven checker.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Sequence

from pydantic import BaseModel, Field

from apps_prompts import AppSpec, Task
from cua import BrowserConfig, open_app, settle
from llm import ModelClient, Repair, RoleClient, ask_json, system_message, user_message

from ._attempts import Attempt, Candidate, attempt_all, unsupported_verdict, verdict_from_attempt, with_judge_checks
from ._proof import PROOF_TIMEOUT_S, STEP_TIMEOUT_MS, run_all
from ._prompts import SYSTEM_PROMPT, RepairItem, render_format_repair, render_repair, render_request
from ._reply import NO_SOLUTION, VerdictEntry, VerifierReplyError, parse_reply
from ._runtime import DEFAULT_TIMEOUT_MS
from ._verdicts import TokenTotals, Verdict


class LLMVerifierConfig(BaseModel):
    """How the LLM verifier batches, repairs and shows the app."""

    batch_size: int = Field(default=10, ge=1, description="Tasks per model conversation.")
    format_repairs: int = Field(default=1, ge=0, le=3, description="Re-asks after invalid JSON or a schema violation.")
    screenshot: bool = Field(default=False, description="Attach a screenshot of the freshly loaded app.")
    max_html_chars: int = Field(default=120_000, ge=1_000, description="Longer HTML is cut (and the cut is said).")
    concurrent_batches: int = Field(default=2, ge=1, description="Batches in flight at once.")
    checker_timeout_ms: int = Field(default=DEFAULT_TIMEOUT_MS, ge=50)
    proof_step_timeout_ms: int = Field(
        default=STEP_TIMEOUT_MS, ge=100, description="How long one solution step may wait for its element."
    )
    proof_timeout_s: float = Field(default=PROOF_TIMEOUT_S, gt=0, le=600, description="The whole replay of one solution.")


async def judge_batch(
    client: ModelClient,
    model: str,
    spec: AppSpec,
    html: str,
    tasks: Sequence[Task],
    *,
    config: LLMVerifierConfig,
    screenshot: bytes | None = None,
    browser: BrowserConfig | None = None,
) -> tuple[list[Verdict], TokenTotals]:
    """Verdicts for one batch of tasks, in the order given, and the tokens the batch used."""
    request = render_request(spec, html, tasks, config.max_html_chars)
    role, tokens = RoleClient(client, model), TokenTotals()
    messages = [system_message(SYSTEM_PROMPT), user_message(request, images=[screenshot] if screenshot else ())]

    async def ask() -> dict[str, VerdictEntry]:
        """Task id → entry (the first entry wins for a repeated id); the reply re-asked for, quoting the error, at
        most `format_repairs` times. Raises VerifierReplyError with the last error when the repairs run out."""
        nonlocal messages
        answer = await ask_json(role, messages, parse=parse_reply, invalid=VerifierReplyError,
                                repair=Repair(render_format_repair), attempts=config.format_repairs + 1)
        answer.count_into(tokens)
        messages = answer.messages
        if not answer.ok:
            raise answer.attempts[-1].error
        return answer.value

    try:
        entries = await ask()
    except VerifierReplyError as exc:
        reason = f"the verifier's reply was unusable after {config.format_repairs} repair(s): {exc}"
        verdicts = [with_judge_checks(unsupported_verdict(t.id, reason, model=model), t) for t in tasks]
        return _with_token_shares(verdicts, tokens), tokens
    by_id = {task.id: task for task in tasks}

    decided: dict[str, Verdict] = {}
    candidates: dict[str, Candidate] = {}
    for task in tasks:
        entry = entries.get(task.id)
        if entry is None:
            decided[task.id] = unsupported_verdict(task.id, "the verifier's reply did not include this task", model=model)
        elif not entry.solvable:
            decided[task.id] = unsupported_verdict(task.id, entry.reason or "judged unsolvable", model=model)
        else:
            candidates[task.id] = _candidate(entry, task)

    judge = functools.partial(
        attempt_all, html, browser=browser, timeout_ms=config.checker_timeout_ms,
        step_timeout_ms=config.proof_step_timeout_ms, proof_timeout_s=config.proof_timeout_s,
    )
    first = await judge(candidates)
    failing = {task_id: attempt for task_id, attempt in first.items() if attempt.needs_repair}
    repaired: dict[str, VerdictEntry] = {}
    repair_error: str | None = None
    second: dict[str, Attempt] = {}
    if failing:
        messages.append(user_message(render_repair({tid: _repair_item(a) for tid, a in failing.items()})))
        try:
            repaired = await ask()
        except VerifierReplyError as exc:
            repair_error = str(exc)
        again = {tid: _candidate(repaired[tid], by_id[tid]) for tid in failing if tid in repaired and repaired[tid].solvable}
        second = await judge(again)

    for task_id in candidates:
        if task_id not in failing:
            decided[task_id] = verdict_from_attempt(task_id, first[task_id], model=model, reason=entries[task_id].reason)
        else:
            decided[task_id] = _after_repair(
                task_id, model, entries[task_id], first[task_id], repaired.get(task_id), second.get(task_id), repair_error
            )
    verdicts = [with_judge_checks(decided[t.id], t) for t in tasks]
    return _with_token_shares(verdicts, tokens), tokens


def _candidate(entry: VerdictEntry, task: Task) -> Candidate:
    """What to judge for one entry: its checker (if any), its solution, and the model's answer check or else the spec's."""
    answer = entry.answer or task.answer_check
    solution_error = entry.solution_error
    if not entry.source and answer is not None and solution_error == NO_SOLUTION:
        solution_error = None  # an answer-only task without steps: its answer shows at load
    return Candidate(source=entry.source or None, kind=entry.kind if entry.source else None,
                     solution=tuple(entry.solution), solution_error=solution_error, solution_text=entry.solution_text,
                     answer=answer, answer_source="verifier" if entry.answer is not None else "spec",
                     answer_error=entry.answer_error, answer_note=entry.answer_note, answer_text=entry.answer_text)


def _repair_item(attempt: Attempt) -> RepairItem:
    candidate = attempt.candidate
    return RepairItem(checker=candidate.source or "", solution=candidate.solution_text, answer=candidate.answer_text,
                      what_happened=attempt.what_happened, static_warnings=attempt.static_warnings)


def _with_token_shares(verdicts: list[Verdict], tokens: TokenTotals) -> list[Verdict]:
    share = tokens.total_tokens // max(len(verdicts), 1)
    for verdict in verdicts:
        verdict.tokens = share
    return verdicts


def _after_repair(
    task_id: str,
    model: str,
    entry: VerdictEntry,
    first: Attempt,
    repaired: VerdictEntry | None,
    second: Attempt | None,
    repair_error: str | None,
) -> Verdict:
    """The verdict of a task whose first checker was not proven, after its one repair round-trip.

    The better attempt is kept (proven > claimed > unsupported; a tie goes to the repair), unless
    the repair judged the task unsolvable: then it is unsupported, as the verifier now says.
    """
    first_failure = f"first attempt: {first.what_happened}"
    if repaired is None:
        why = f"the repair reply was unusable: {repair_error}" if repair_error else "the repair reply left this task out"
        verdict = verdict_from_attempt(task_id, first, model=model, reason=entry.reason, repairs=1)
        (verdict.warnings if verdict.valid else verdict.reasons).append(why)
        return verdict
    if not repaired.solvable:
        return unsupported_verdict(
            task_id, first_failure, repaired.reason or "judged unsolvable on repair", model=model,
            checker_source=first.candidate.source, checker_kind=first.gate.kind if first.gate else None, gate=first.gate,
            repairs=1,
        )
    assert second is not None  # a solvable repaired entry is always judged again
    if second.better_than(first):
        verdict = verdict_from_attempt(task_id, second, model=model, reason=repaired.reason, repairs=1)
        if verdict.valid:
            verdict.warnings.insert(0, first_failure)
        elif first.gate is not None and second.gate is not None:
            verdict.reasons = [f"checker failed the validation gate: {first.gate.reason}",
                               f"after one repair the checker still failed the gate: {second.gate.reason}"]
        else:
            verdict.reasons = [first_failure, f"after one repair: {second.what_happened}"]
        return verdict
    verdict = verdict_from_attempt(task_id, first, model=model, reason=entry.reason, repairs=1)
    verdict.warnings.append(f"the repaired checker was not kept ({second.what_happened})")
    return verdict


async def loaded_screenshot(html: str, browser: BrowserConfig | None = None) -> bytes:
    """A PNG of the app as it looks right after loading (what the verifier may be shown)."""
    async with open_app(html, browser) as app:
        await settle(app.page)
        return await app.page.screenshot(type="png")


async def judge_app(
    client: ModelClient,
    model: str,
    spec: AppSpec,
    html: str,
    *,
    config: LLMVerifierConfig | None = None,
    browser: BrowserConfig | None = None,
) -> tuple[list[Verdict], TokenTotals]:
    """Verdicts for every task of `spec` (in spec order) and the app's token totals."""
    config = config or LLMVerifierConfig()
    screenshot = await loaded_screenshot(html, browser) if config.screenshot else None
    batches = [spec.tasks[i : i + config.batch_size] for i in range(0, len(spec.tasks), config.batch_size)]
    limit = asyncio.Semaphore(config.concurrent_batches)

    async def run(batch: Sequence[Task]) -> tuple[list[Verdict], TokenTotals]:
        async with limit:
            return await judge_batch(
                client, model, spec, html, batch, config=config, screenshot=screenshot, browser=browser
            )

    # The first batch to fail for good is raised as itself (callers catch ModelCallError, not a group).
    results = list((await run_all({index: run(batch) for index, batch in enumerate(batches)})).values())
    totals = TokenTotals(**{name: sum(getattr(tokens, name) for _, tokens in results)
                            for name in TokenTotals.model_fields})
    return [verdict for batch_verdicts, _ in results for verdict in batch_verdicts], totals
