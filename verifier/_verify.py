"""The verifier's entry point: one app version in, `AppVerdicts` (and `verdicts.json`) out.

Verifiers are looked up by name: "offline" puts the spec's reference checkers through the gate;
any other name is a model (or role) of the model registry, judged by the LLM verifier — unless
the registry marks it offline, in which case the offline path is taken as well.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING

from apps_prompts import AppSpec, reference_html_path
from cua import BrowserConfig
from llm import get_client

from ._attempts import Candidate, attempt_all, unsupported_verdict, verdict_from_attempt, with_judge_checks
from ._llm import LLMVerifierConfig, judge_app
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
            verdicts.append(with_judge_checks(unsupported_verdict(
                task.id, "the spec has no reference checker or answer check for this task (the offline verifier uses only those)",
                model=OFFLINE, offline=True,
            ), task))
            continue
        gate = attempt.gate
        reason = "the spec's answer check (no DOM checker)" if gate is None else "reference checker passed the gate"
        verdict = verdict_from_attempt(task.id, attempt, model=OFFLINE, offline=True, reason=reason)
        if gate is not None and not gate.accepted:  # the gate's reason alone
            verdict.reasons = [f"reference checker failed the validation gate: {gate.reason}"]
        verdicts.append(with_judge_checks(verdict, task))
    return verdicts, TokenTotals()


def _html_for(spec: AppSpec, html: str | None) -> str:
    if html is not None:
        return html
    path = reference_html_path(spec)
    if path is None:
        raise ValueError(f"app '{spec.id}' has no reference_html; pass the HTML of the app version to verify")
    return Path(path).read_text(encoding="utf-8")
