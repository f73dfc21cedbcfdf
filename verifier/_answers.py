"""Answer checks: the agent's final answer against a task's expected value (OSUniverse's answer check).

The answer is what the agent said when it finished: UI-TARS's `finished(content=…)`, OpenAI
computer-use's final message. Four ways to compare (`apps_prompts.AnswerCheck.match`):

- exact: the same text (surrounding white space aside);
- normalized: the same once case, runs of white space, and quotes or punctuation around the
  answer are ignored ("  The answer: 42. " is not "42", but "'Paris.'" is "paris");
- regex: the pattern matches somewhere in the answer, case-insensitive;
- number: the last number in the answer (where results usually go: "the total is 1,234.5") lies
  within `tolerance` of the expected number; thousands separators and exponents are read.

A page's visible text is read against the same check (`answer_on_page`: can an agent read the answer
there after the solution?) with each kind found as whole words — "60" is not read out of "160":

- exact: the expected text, as written (case and all);
- normalized: the expected text once case, runs of white space and the punctuation around it are
  ignored;
- regex: a match of the pattern (case-insensitive, `^`/`$` per line);
- number: a number within the tolerance of the expected one.

A small number is easy to find on a busy page for the wrong reason, so this shows the answer can be
read, not that it is the only thing an agent would read.
"""

from __future__ import annotations

import math
import re

from pydantic import BaseModel

from apps_prompts import AnswerCheck

_NUMBER = re.compile(r"[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?|[-+]?\.\d+(?:[eE][-+]?\d+)?")
SHOWN_CHARS = 160  # of the page's text, in a reason
_EDGE = " \t\r\n\"'“”‘’`.,;:!?()[]{}"


class AnswerResult(BaseModel):
    passed: bool
    reason: str


def normalize_answer(text: str) -> str:
    return " ".join(text.strip(_EDGE).lower().split()).strip(_EDGE)


def numbers_in(text: str) -> list[float]:
    """Every finite number written in `text`, in order (thousands separators and exponents read)."""
    values = (float(match.group().replace(",", "")) for match in _NUMBER.finditer(text))  # each matches float's syntax
    return [value for value in values if math.isfinite(value)]


def match_answer(answer: str | None, check: AnswerCheck) -> AnswerResult:
    """Whether `answer` passes `check`, and why (the reason names what was compared)."""
    if answer is None or not answer.strip():
        return AnswerResult(passed=False, reason="the agent gave no final answer")
    shown = answer.strip() if len(answer.strip()) <= 120 else answer.strip()[:117] + "…"
    match check.match:
        case "exact":
            passed = answer.strip() == check.expected.strip()
        case "normalized":
            passed = normalize_answer(answer) == normalize_answer(check.expected)
        case "regex":
            passed = re.search(check.expected, answer, re.IGNORECASE) is not None
        case "number":
            values = numbers_in(answer)
            if not values:
                return AnswerResult(passed=False, reason=f"no number in the answer {shown!r}")
            expected = float(check.expected.replace(",", ""))
            got = values[-1]
            passed = abs(got - expected) <= check.tolerance
            return AnswerResult(passed=passed, reason=(
                f"answer's number {got:g} {'is' if passed else 'is not'} within {check.tolerance:g} of {expected:g}"))
    verb = "matches" if passed else "does not match"
    return AnswerResult(passed=passed, reason=f"answer {shown!r} {verb} {check.expected!r} ({check.match})")


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
    return AnswerResult(passed=False, reason=f"the page does not show {what} (it shows: {excerpt(text)!r})")


def _phrase(text: str, phrase: str) -> str | None:
    """`phrase` in `text` as whole words (no letter or digit right before or after it), or None."""
    if not phrase:
        return None
    before = r"(?<!\w)" if re.match(r"\w", phrase) else ""
    after = r"(?!\w)" if re.search(r"\w$", phrase) else ""
    hit = re.search(before + re.escape(phrase) + after, text)
    return hit.group() if hit else None


def excerpt(text: str, limit: int = SHOWN_CHARS) -> str:
    """`text` with its white space collapsed, cut to at most `limit` characters (ending "…" when cut)."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
