"""Proving an answer check: after the reference solution, the expected answer is there to be read.

A DOM checker is proven by turning true after its solution; an answer check cannot be run before
an agent answers, so what is proven instead is that an agent *could* answer: after replaying the
solution on a fresh page, the page's visible text (`document.body.innerText`, read in the
harness's isolated world, so the app's scripts cannot change what is read; form fields' values
and hidden elements are not part of it) shows the expected answer —

- exact: the expected text, as written (case and all);
- normalized: the expected text once case, runs of white space and the punctuation around it are
  ignored;
- regex: a match of the pattern (case-insensitive, `^`/`$` per line);
- number: a number within the tolerance of the expected one.

Text and numbers are found as whole words: "60" is not read out of "160". A small number is easy
to find on a busy page for the wrong reason, so this shows the answer can be read, not that it is
the only thing an agent would read.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Sequence

from pydantic import BaseModel, Field

from apps_prompts import AnswerCheck, SolutionStep
from cua import BrowserConfig, JavaScriptError, JavaScriptTimeout, isolated_world, open_app, settle

from ._answers import AnswerResult, normalize_answer, numbers_in
from ._proof import PROOF_TIMEOUT_S, STEP_TIMEOUT_MS, StepFailure, proof_slots, replay_solution

PAGE_TEXT_MAX_CHARS = 200_000
PAGE_TEXT_TIMEOUT_MS = 5_000
SHOWN_CHARS = 160  # of the page's text, in a reason
_PAGE_TEXT_JS = "(max) => ((document.body && document.body.innerText) || '').slice(0, max)"


class AnswerProof(BaseModel):
    """One replay of a solution on a fresh page, and whether the expected answer could be read after it."""

    shown: bool = Field(default=False, description="The expected answer is in the page's visible text after the replay.")
    steps: int = Field(default=0, description="How many steps the solution has (0: the answer shows at load).")
    failed_step: StepFailure | None = None
    timed_out: bool = False
    detail: str = Field(default="", description="What the page's text showed, or why it could not be read.")
    elapsed_ms: float = 0.0

    @property
    def reason(self) -> str:
        """What the proof showed, in one sentence (for the verdict, `aui apps validate` and the repair message)."""
        if self.failed_step is not None:
            return str(self.failed_step)
        if self.timed_out:
            return f"the replay of the {self.steps}-step solution did not finish within its time limit"
        after = f"after the {self.steps}-step solution" if self.steps else "at load (no solution steps)"
        return f"{self.detail} {after}" if self.detail else f"the page's text was not read {after}"


def answer_on_page(text: str, check: AnswerCheck) -> AnswerResult:
    """Whether `text` (a page's visible text) shows the answer `check` expects, and what was found or missed."""
    expected = check.expected.strip()
    match check.match:
        case "exact":
            found = _phrase(text, expected)
            what = f"the text {expected!r}"
        case "normalized":
            found = _phrase(" ".join(text.lower().split()), normalize_answer(expected))
            what = f"the text {normalize_answer(expected)!r} (case and spacing aside)"
        case "regex":
            hit = re.search(expected, text, re.IGNORECASE | re.MULTILINE)
            found = hit.group() if hit else None
            what = f"a match of /{expected}/"
        case "number":
            target = float(expected.replace(",", ""))
            values = numbers_in(text)
            hit_value = next((v for v in values if abs(v - target) <= check.tolerance), None)
            if hit_value is not None:
                return AnswerResult(passed=True, reason=f"the page shows the number {hit_value:g} "
                                    f"(within {check.tolerance:g} of {target:g})")
            shown = ", ".join(f"{v:g}" for v in values[:12]) + (", …" if len(values) > 12 else "")
            return AnswerResult(passed=False, reason=f"no number within {check.tolerance:g} of {target:g} is on the page "
                                f"(numbers shown: {shown or 'none'})")
    if found is not None:
        return AnswerResult(passed=True, reason=f"the page shows {what}")
    return AnswerResult(passed=False, reason=f"the page does not show {what} (it shows: {_excerpt(text)!r})")


async def page_text(page, max_chars: int = PAGE_TEXT_MAX_CHARS) -> str:
    """The page's visible text, read in the harness's isolated world (at most `max_chars` characters).

    Raises JavaScriptError / JavaScriptTimeout when the page cannot be read.
    """
    text = await isolated_world(page).call(_PAGE_TEXT_JS, max_chars, timeout_ms=PAGE_TEXT_TIMEOUT_MS)
    return str(text or "").encode("utf-16", "surrogatepass").decode("utf-16", "replace")


async def prove_answer(
    html: str,
    check: AnswerCheck,
    solution: Sequence[SolutionStep],
    *,
    config: BrowserConfig | None = None,
    step_timeout_ms: int = STEP_TIMEOUT_MS,
    proof_timeout_s: float = PROOF_TIMEOUT_S,
) -> AnswerProof:
    """Load `html` fresh, replay `solution` (may be empty: the answer shows at load), read the page's text.

    As for checkers, the first replay settles only at the end; an answer not found after it earns a
    careful replay on a fresh page that settles after every step. Never raises for anything the
    solution or the page does; raises only what the browser raises (a context that cannot be opened).
    """
    proof = AnswerProof(steps=len(solution))
    for settle_each in (False, True):
        started = time.perf_counter()
        proof = AnswerProof(steps=len(solution))
        async with proof_slots(), open_app(html, config) as app:
            await settle(app.page)
            try:
                async with asyncio.timeout(proof_timeout_s):
                    proof.failed_step = await replay_solution(app.page, solution, step_timeout_ms, settle_each=settle_each)
                    if proof.failed_step is None:
                        await settle(app.page)
            except TimeoutError:
                proof.timed_out = True
            if proof.failed_step is None and not proof.timed_out:
                try:
                    result = answer_on_page(await page_text(app.page), check)
                    proof.shown, proof.detail = result.passed, result.reason
                except (JavaScriptError, JavaScriptTimeout) as error:
                    proof.detail = f"the page's text could not be read ({error})"
        proof.elapsed_ms = round((time.perf_counter() - started) * 1000, 1)
        if proof.shown or proof.failed_step is not None or proof.timed_out or not solution:
            break
    return proof


def _phrase(text: str, phrase: str) -> str | None:
    """`phrase` in `text` as whole words (no letter or digit right before or after it), or None."""
    if not phrase:
        return None
    before = r"(?<!\w)" if re.match(r"\w", phrase) else ""
    after = r"(?!\w)" if re.search(r"\w$", phrase) else ""
    hit = re.search(before + re.escape(phrase) + after, text)
    return hit.group() if hit else None


def _excerpt(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= SHOWN_CHARS else flat[: SHOWN_CHARS - 1] + "…"
