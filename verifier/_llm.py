"""The LLM verifier: a model judges an app's tasks in batches and writes their checkers.

Per batch: one conversation. A reply that is not JSON or breaks the schema gets at most
`format_repairs` re-asks quoting the error; then every checker is put through the gate, and the
rejected ones get exactly one repair round-trip quoting the gate's reasons. Whatever is still
missing or rejected after that is unsolvable, with the reason recorded. Model text is parsed
as JSON and run only as a checker in the browser's isolated world — never evaluated in Python.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import jsonschema
from pydantic import BaseModel, Field

from apps_prompts import AppSpec, Task
from cua import BrowserConfig, open_app, settle
from llm import ModelClient, assistant_message, system_message, user_message

from ._checker import CompiledChecker
from ._gate import GateResult, gate_checkers, precompile
from ._prompts import (
    SYSTEM_PROMPT,
    render_format_repair,
    render_gate_repair,
    render_request,
    verdict_reply_schema,
)
from ._runtime import DEFAULT_TIMEOUT_MS
from ._verdicts import TokenTotals, Verdict

_VALIDATOR = jsonschema.Draft202012Validator(verdict_reply_schema())


class LLMVerifierConfig(BaseModel):
    """How the LLM verifier batches, repairs and shows the app."""

    batch_size: int = Field(default=10, ge=1, description="Tasks per model conversation.")
    format_repairs: int = Field(default=1, ge=0, le=3, description="Re-asks after invalid JSON or a schema violation.")
    screenshot: bool = Field(default=False, description="Attach a screenshot of the freshly loaded app.")
    max_html_chars: int = Field(default=120_000, ge=1_000, description="Longer HTML is cut (and the cut is said).")
    concurrent_batches: int = Field(default=2, ge=1, description="Batches in flight at once.")
    checker_timeout_ms: int = Field(default=DEFAULT_TIMEOUT_MS, ge=50)


class VerifierReplyError(ValueError):
    """The model's reply could not be used even after the allowed repairs."""


@dataclass
class _Conversation:
    """One batch's messages and what its calls cost."""

    client: ModelClient
    model: str
    messages: list[dict[str, Any]]
    tokens: TokenTotals = field(default_factory=TokenTotals)

    async def ask(self) -> str:
        result = await self.client.chat(self.messages, model=self.model)
        self.tokens.calls += 1
        self.tokens.cached_calls += int(result.cached)
        self.tokens.prompt_tokens += result.usage.prompt_tokens
        self.tokens.completion_tokens += result.usage.completion_tokens
        self.messages.append(assistant_message(result.text))
        return result.text

    async def ask_json(self, format_repairs: int) -> dict[str, dict[str, Any]]:
        """Ask, parse and validate; re-ask quoting the error at most `format_repairs` times.

        Returns task id → entry (the first entry wins for a repeated id).
        Raises VerifierReplyError with the last error when the repairs run out.
        """
        for attempt in range(format_repairs + 1):
            text = await self.ask()
            try:
                return parse_reply(text)
            except VerifierReplyError as exc:
                if attempt == format_repairs:
                    raise
                self.messages.append(user_message(render_format_repair(str(exc))))
        raise AssertionError("unreachable")


def parse_reply(text: str) -> dict[str, dict[str, Any]]:
    """Task id → entry from a reply; raises VerifierReplyError saying what is wrong with it."""
    candidate = _json_text(text)
    try:
        data = json.loads(candidate)
    except json.JSONDecodeError as exc:
        raise VerifierReplyError(f"it is not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})") from None
    error = next(iter(sorted(_VALIDATOR.iter_errors(data), key=lambda e: list(e.path))), None)
    if error is not None:
        where = "/".join(str(part) for part in error.absolute_path) or "the top level"
        hint = error.schema.get("description") if isinstance(error.schema, dict) else None
        message = hint or error.message
        raise VerifierReplyError(f"it does not match the required format at {where}: {message[:400]}")
    entries: dict[str, dict[str, Any]] = {}
    for entry in data["verdicts"]:
        entries.setdefault(entry["task_id"], entry)
    return entries


def _json_text(text: str) -> str:
    """The JSON object in a reply: inside a ```json fence if there is one, else first { to last }."""
    fenced = re.search(r"```(?:json)?\s*(\{.*\})\s*```", text, re.DOTALL)
    if fenced:
        return fenced.group(1)
    start, end = text.find("{"), text.rfind("}")
    return text[start : end + 1] if start != -1 and end > start else text.strip()


def _candidate(entry: dict[str, Any]) -> CompiledChecker | GateResult:
    if entry.get("checker"):
        return precompile(entry["checker"])
    return precompile(entry["rule"], kind="rule")


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
    conversation = _Conversation(
        client,
        model,
        [system_message(SYSTEM_PROMPT), user_message(request, images=[screenshot] if screenshot else ())],
    )

    def unsolvable(task: Task, *reasons: str) -> Verdict:
        return Verdict(task_id=task.id, model=model, solvable=False, reasons=list(reasons))

    try:
        entries = await conversation.ask_json(config.format_repairs)
    except VerifierReplyError as exc:
        reason = f"the verifier's reply was unusable after {config.format_repairs} repair(s): {exc}"
        return _with_token_shares([unsolvable(t, reason) for t in tasks], conversation.tokens), conversation.tokens

    decided: dict[str, Verdict] = {}
    candidates: dict[str, CompiledChecker | GateResult] = {}
    for task in tasks:
        entry = entries.get(task.id)
        if entry is None:
            decided[task.id] = unsolvable(task, "the verifier's reply did not include this task")
        elif not entry["solvable"]:
            decided[task.id] = unsolvable(task, entry["reason"] or "judged unsolvable")
        else:
            candidates[task.id] = _candidate(entry)

    gates = await _gate_all(html, candidates, browser, config.checker_timeout_ms)
    failing = {task_id: gate for task_id, gate in gates.items() if not gate.accepted}
    repaired: dict[str, dict[str, Any]] = {}
    repair_error: str | None = None
    if failing:
        shown = {tid: (_source(entries[tid]), gate.reason) for tid, gate in failing.items()}
        conversation.messages.append(user_message(render_gate_repair(shown)))
        try:
            repaired = await conversation.ask_json(config.format_repairs)
        except VerifierReplyError as exc:
            repair_error = str(exc)
        second = {tid: _candidate(repaired[tid]) for tid in failing if tid in repaired and repaired[tid]["solvable"]}
        gates.update(await _gate_all(html, second, browser, config.checker_timeout_ms))

    for task in tasks:
        if task.id not in decided:
            decided[task.id] = _final_verdict(
                task, model, entries[task.id], gates[task.id], failing.get(task.id), repaired.get(task.id), repair_error
            )

    return _with_token_shares([decided[t.id] for t in tasks], conversation.tokens), conversation.tokens


def _with_token_shares(verdicts: list[Verdict], tokens: TokenTotals) -> list[Verdict]:
    share = tokens.total_tokens // max(len(verdicts), 1)
    for verdict in verdicts:
        verdict.tokens = share
    return verdicts


def _final_verdict(
    task: Task,
    model: str,
    first: dict[str, Any],
    gate: GateResult,
    first_failure: GateResult | None,
    repaired: dict[str, Any] | None,
    repair_error: str | None,
) -> Verdict:
    """The verdict of a task the model called solvable, after at most one gate repair."""
    if first_failure is None:
        return _checked_verdict(task, model, first, gate)
    rejected = f"checker failed the validation gate: {first_failure.reason}"
    if repaired is None:
        why = f"the repair reply was unusable: {repair_error}" if repair_error else "the repair reply left this task out"
        return Verdict(task_id=task.id, model=model, solvable=False, reasons=[rejected, why],
                       checker_source=_source(first), checker_kind=first_failure.kind, gate=first_failure, repairs=1)
    if not repaired["solvable"]:
        return Verdict(task_id=task.id, model=model, solvable=False, gate=first_failure, repairs=1,
                       reasons=[rejected, repaired["reason"] or "judged unsolvable on repair"],
                       checker_source=_source(first), checker_kind=first_failure.kind)
    second = _checked_verdict(task, model, repaired, gate)
    second.repairs = 1
    if second.valid:
        second.warnings.insert(0, f"first {rejected}")
    else:
        second.reasons = [rejected, f"after one repair the checker still failed the gate: {gate.reason}"]
    return second


def _checked_verdict(task: Task, model: str, entry: dict[str, Any], gate: GateResult) -> Verdict:
    accepted = gate.accepted
    return Verdict(
        task_id=task.id,
        model=model,
        solvable=accepted,
        checker=gate.javascript if accepted else None,
        checker_source=_source(entry),
        checker_kind=gate.kind,
        gate=gate,
        reasons=[entry["reason"]] if accepted else [entry["reason"], f"checker failed the validation gate: {gate.reason}"],
        warnings=list(gate.warnings),
    )


def _source(entry: dict[str, Any]) -> str:
    return str(entry.get("checker") or entry.get("rule") or "")


async def _gate_all(
    html: str, candidates: dict[str, CompiledChecker | GateResult], browser: BrowserConfig | None, timeout_ms: int
) -> dict[str, GateResult]:
    results = {tid: c for tid, c in candidates.items() if isinstance(c, GateResult)}
    runnable = {tid: c for tid, c in candidates.items() if isinstance(c, CompiledChecker)}
    if runnable:
        results.update(await gate_checkers(html, runnable, config=browser, timeout_ms=timeout_ms))
    return results


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

    # A TaskGroup, not gather: when one batch fails for good the others are cancelled, not
    # orphaned; the first failure is raised as itself (callers catch ModelCallError, not a group).
    try:
        async with asyncio.TaskGroup() as group:
            running = [group.create_task(run(batch)) for batch in batches]
    except BaseExceptionGroup as failures:
        raise failures.exceptions[0] from None
    results = [task.result() for task in running]
    totals = TokenTotals()
    verdicts: list[Verdict] = []
    for batch_verdicts, tokens in results:
        verdicts.extend(batch_verdicts)
        totals.prompt_tokens += tokens.prompt_tokens
        totals.completion_tokens += tokens.completion_tokens
        totals.calls += tokens.calls
        totals.cached_calls += tokens.cached_calls
    return verdicts, totals
