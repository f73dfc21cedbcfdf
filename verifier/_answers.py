"""Answer checks: the agent's final answer against a task's expected value (OSUniverse's answer check).

The answer is what the agent said when it finished: UI-TARS's `finished(content=…)`, OpenAI
computer-use's final message. Four ways to compare (`apps_prompts.AnswerCheck.match`):

- exact: the same text (surrounding white space aside);
- normalized: the same once case, runs of white space, and quotes or punctuation around the
  answer are ignored ("  The answer: 42. " is not "42", but "'Paris.'" is "paris");
- regex: the pattern matches somewhere in the answer, case-insensitive;
- number: the last number in the answer (where results usually go: "the total is 1,234.5") lies
  within `tolerance` of the expected number; thousands separators and exponents are read.
"""

from __future__ import annotations

import math
import re

from pydantic import BaseModel

from apps_prompts import AnswerCheck

_NUMBER = re.compile(r"[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?|[-+]?\.\d+(?:[eE][-+]?\d+)?")
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
