"""Reading the verifier model's reply: JSON text → one validated entry per task.

The reply must match `verdict_reply_schema(solutions=False)` to be usable at all (a reply that
does not is re-asked for as a whole). Each solvable entry's solution is then checked on its own,
against `solution_schema()` and `apps_prompts.SolutionStep`: a missing or bad solution costs that
task its proof (it is named in the repair message), never the batch. So is its answer check
(`answer_schema()`, `apps_prompts.AnswerCheck`): an expected number written with its unit or
currency ("$1,717.83") is read as the one number in it; an answer that cannot be used (not a
number for match "number", a regex that does not compile or that matches an empty answer) is
dropped with the reason, which the repair message tells the model.
"""

from __future__ import annotations

import json
import re
from typing import Any

import jsonschema
from pydantic import BaseModel, Field, ValidationError

from apps_prompts import AnswerCheck, SolutionStep
from llm import JsonReplyError, parse_json_reply

from ._answers import numbers_in
from ._checker import CheckerKind
from ._prompts import answer_schema, solution_schema, verdict_reply_schema

_REPLY = jsonschema.Draft202012Validator(verdict_reply_schema(solutions=False))
_SOLUTION = jsonschema.Draft202012Validator(solution_schema())
_ANSWER = jsonschema.Draft202012Validator(answer_schema())
NO_SOLUTION = "no solution was given"


class VerifierReplyError(ValueError):
    """The model's reply could not be used even after the allowed repairs."""


class VerdictEntry(BaseModel):
    """One task's entry in a verifier reply, validated."""

    task_id: str
    solvable: bool
    reason: str
    checker: str | None = None
    rule: str | None = None
    solution: list[SolutionStep] = Field(default_factory=list, description="Empty when none was usable.")
    solution_error: str | None = Field(default=None, description="Why the solution sent could not be used.")
    solution_text: str = Field(default="", description="The solution as sent (JSON), for the repair message.")
    answer: AnswerCheck | None = Field(default=None, description="The answer check, when one was sent and usable.")
    answer_error: str | None = Field(default=None, description="Why the answer check sent could not be used.")
    answer_note: str | None = Field(default=None, description="How the answer check sent was repaired to be usable.")
    answer_text: str = Field(default="", description="The answer check as sent (JSON), for the repair message.")

    @property
    def source(self) -> str:
        """The checker as written (JS body or rule)."""
        return self.checker or self.rule or ""

    @property
    def kind(self) -> CheckerKind | None:
        """'rule' when the entry gave a rule, else None (told apart by its shape)."""
        return None if self.checker else "rule"


def parse_reply(text: str) -> dict[str, VerdictEntry]:
    """Task id → entry from a reply (the first entry wins for a repeated id).

    Raises VerifierReplyError saying what is wrong with a reply that cannot be used at all.
    """
    data = _reply_json(text)
    problem = _schema_problem(_REPLY, data, "it")
    if problem is not None:
        raise VerifierReplyError(problem)
    entries: dict[str, VerdictEntry] = {}
    for raw in data["verdicts"]:
        if raw["task_id"] in entries:
            continue
        steps, problem = parse_solution(raw.get("solution")) if raw["solvable"] else ([], None)
        answer, answer_error, answer_note = parse_answer(raw.get("answer")) if raw["solvable"] else (None, None, None)
        entries[raw["task_id"]] = VerdictEntry(
            task_id=raw["task_id"],
            solvable=raw["solvable"],
            reason=raw["reason"],
            checker=raw.get("checker") or None,
            rule=raw.get("rule") or None,
            solution=steps,
            solution_error=problem,
            solution_text=json.dumps(raw["solution"], ensure_ascii=False)[:4000] if raw.get("solution") else "",
            answer=answer,
            answer_error=answer_error,
            answer_note=answer_note,
            answer_text=json.dumps(raw["answer"], ensure_ascii=False)[:1000] if raw.get("answer") is not None else "",
        )
    return entries


def parse_answer(raw: Any) -> tuple[AnswerCheck | None, str | None, str | None]:
    """The answer check as sent: (check, None, note) or (None, why it cannot be used, None); (None, None, None) when none was sent.

    `note` says how a usable check was repaired (an expected number read out of "$1,717.83"), else None.
    """
    if raw is None:
        return None, None, None
    bare_note = None
    if isinstance(raw, (str, int, float)) and not isinstance(raw, bool):  # "answer": "42" means the expected answer
        raw = {"expected": raw, "match": "number" if isinstance(raw, (int, float)) else "normalized"}
        bare_note = f"a bare answer was read as expected {raw['expected']!r} with match '{raw['match']}'"
    problem = _schema_problem(_ANSWER, raw, "the answer", "answer")
    if problem is not None:
        return None, problem, None
    expected = raw["expected"]  # text or a number (never a bool): the schema says so
    expected = json.dumps(expected) if isinstance(expected, (int, float)) else expected.strip()
    match = raw.get("match", "normalized")
    note = None
    if match == "number":
        try:
            float(expected.replace(",", ""))
        except ValueError:
            values = numbers_in(expected)
            if len(values) != 1:
                found = "no number" if not values else f"{len(values)} numbers"
                return None, f"expected {expected!r} is not a number ({found} in it), but match is 'number'", None
            number = str(int(values[0])) if values[0].is_integer() and abs(values[0]) < 1e15 else repr(values[0])
            note, expected = f"expected {expected!r} was read as the number {number}", number
    if match == "regex":
        try:
            pattern = re.compile(expected, re.IGNORECASE)
        except re.error as exc:
            return None, f"expected {expected!r} is not a valid regex ({exc})", None
        if pattern.search("") is not None:
            return None, f"the regex {expected!r} matches an empty answer, so it would accept any answer", None
    try:
        check = AnswerCheck(expected=expected, match=match, tolerance=raw.get("tolerance", 0.0))
    except ValidationError as exc:
        return None, f"the answer is invalid: {exc.errors()[0]['msg']}", None
    return check, None, "; ".join(filter(None, [bare_note, note])) or None


def parse_solution(raw: Any) -> tuple[list[SolutionStep], str | None]:
    """The steps of a solution as sent, or ([], why it cannot be used)."""
    if raw is None or raw == []:
        return [], NO_SOLUTION
    problem = _schema_problem(_SOLUTION, raw, "the solution", "solution")
    if problem is not None:
        return [], problem
    steps = []
    for number, step in enumerate(raw, start=1):
        value = step.get("value")
        if isinstance(value, (int, float)):  # "value": 5 means the text "5"
            value = json.dumps(value)
        try:
            steps.append(SolutionStep(action=step["action"], selector=step["selector"], value=value))
        except ValidationError as exc:
            return [], f"solution step {number} is invalid: {exc.errors()[0]['msg']}"
    return steps, None


def _schema_problem(validator: jsonschema.Draft202012Validator, data: Any, what: str, root: str = "") -> str | None:
    """`<what> does not match the required format at <root/path>: <why>` for the schema's earliest error, or None."""
    # the earliest place in the reply first (indices compared as numbers)
    order = lambda e: [(0, part, "") if isinstance(part, int) else (1, 0, str(part)) for part in e.path]  # noqa: E731
    error = next(iter(sorted(validator.iter_errors(data), key=order)), None)
    if error is None:
        return None
    where = "/".join([root, *map(str, error.absolute_path)] if root else map(str, error.absolute_path))
    hint = error.schema.get("description") if isinstance(error.schema, dict) else None
    return f"{what} does not match the required format at {where or 'the top level'}: {(hint or error.message)[:400]}"


def _reply_json(text: str) -> Any:
    """The JSON of a reply, read by `llm.parse_json_reply`; a reply with no `{…}` in it is read whole.

    Raises VerifierReplyError saying where the JSON stops being valid.
    """
    # NaN is read as a number, as this reading always has: refusing it would change the repair request.
    try:
        return parse_json_reply(text, allow_nan=True)
    except JsonReplyError as error:
        if error.problem == "invalid_json":
            raise VerifierReplyError(f"it is not valid JSON ({error.detail})") from error
    # No `{` closed by a `}`: the whole reply is parsed, as it always was here, so the repair request says
    # where the parser stopped in the reply as sent (its first line for a reply cut short inside a fence).
    try:
        return json.loads(text.strip())
    except json.JSONDecodeError as exc:
        raise VerifierReplyError(f"it is not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})") from None
