"""Reading the verifier model's reply: JSON text → one validated entry per task.

The reply must match `verdict_reply_schema(solutions=False)` to be usable at all (a reply that
does not is re-asked for as a whole). Each solvable entry's solution is then checked on its own,
against `solution_schema()` and `apps_prompts.SolutionStep`: a missing or bad solution costs that
task its proof (it is named in the repair message), never the batch.
"""

from __future__ import annotations

import json
import re
from typing import Any

import jsonschema
from pydantic import BaseModel, Field, ValidationError

from apps_prompts import SolutionStep

from ._checker import CheckerKind
from ._prompts import solution_schema, verdict_reply_schema

_REPLY = jsonschema.Draft202012Validator(verdict_reply_schema(solutions=False))
_SOLUTION = jsonschema.Draft202012Validator(solution_schema())
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
    candidate = _json_text(text)
    try:
        data = json.loads(candidate)
    except json.JSONDecodeError as exc:
        raise VerifierReplyError(f"it is not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})") from None
    error = _first_error(_REPLY, data)
    if error is not None:
        where = "/".join(str(part) for part in error.absolute_path) or "the top level"
        raise VerifierReplyError(f"it does not match the required format at {where}: {_message(error)}")
    entries: dict[str, VerdictEntry] = {}
    for raw in data["verdicts"]:
        if raw["task_id"] in entries:
            continue
        steps, problem = parse_solution(raw.get("solution")) if raw["solvable"] else ([], None)
        entries[raw["task_id"]] = VerdictEntry(
            task_id=raw["task_id"],
            solvable=raw["solvable"],
            reason=raw["reason"],
            checker=raw.get("checker") or None,
            rule=raw.get("rule") or None,
            solution=steps,
            solution_error=problem,
            solution_text=json.dumps(raw["solution"], ensure_ascii=False)[:4000] if raw.get("solution") else "",
        )
    return entries


def parse_solution(raw: Any) -> tuple[list[SolutionStep], str | None]:
    """The steps of a solution as sent, or ([], why it cannot be used)."""
    if raw is None or raw == []:
        return [], NO_SOLUTION
    error = _first_error(_SOLUTION, raw)
    if error is not None:
        where = "/".join(str(part) for part in error.absolute_path)
        return [], f"the solution does not match the required format at solution{'/' + where if where else ''}: {_message(error)}"
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


def _first_error(validator: jsonschema.Draft202012Validator, data: Any) -> jsonschema.ValidationError | None:
    # the earliest place in the reply first (indices compared as numbers)
    order = lambda e: [(0, part, "") if isinstance(part, int) else (1, 0, str(part)) for part in e.path]  # noqa: E731
    return next(iter(sorted(validator.iter_errors(data), key=order)), None)


def _message(error: jsonschema.ValidationError) -> str:
    hint = error.schema.get("description") if isinstance(error.schema, dict) else None
    return (hint or error.message)[:400]


def _json_text(text: str) -> str:
    """The JSON object in a reply: inside a ```json fence if there is one, else first { to last }."""
    fenced = re.search(r"```(?:json)?\s*(\{.*\})\s*```", text, re.DOTALL)
    if fenced:
        return fenced.group(1)
    start, end = text.find("{"), text.rfind("}")
    return text[start : end + 1] if start != -1 and end > start else text.strip()
