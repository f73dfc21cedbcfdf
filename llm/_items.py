"""The shapes of the reply parts callers act on, validated where replies enter the program.

Model output is untrusted: a chat `tool_calls` entry or a Responses `computer_call` may miss its
id, carry arguments that are not JSON, name an action nobody knows, or give coordinates as
strings. `ChatResult` and `ResponsesResult` check these parts when they are built; a reply with a
malformed one is still returned (its text, usage and raw body are real and were paid for), but
the result says why it is unusable (`result.invalid`), so a caller re-asks the model instead of
failing deep inside its own parsing.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, field_validator, model_validator

# Strict: "12" and true are not coordinates; finite: Python's json accepts NaN and Infinity.
Number = Annotated[float, Field(strict=True, allow_inf_nan=False)]

_PROBLEM_LIMIT = 300  # characters of a problem description; the offending values are never quoted whole


class _Shape(BaseModel):
    # Fields the protocol adds later (or a server adds on its own) are kept, not refused.
    model_config = ConfigDict(extra="allow", frozen=True)


# ---- chat completions -------------------------------------------------------------------------


class FunctionCall(_Shape):
    """The `function` of a chat tool call."""

    name: str = Field(min_length=1)
    arguments: dict[str, Any]
    """The arguments, parsed: the protocol sends a JSON string, which must hold an object."""

    @field_validator("arguments", mode="before")
    @classmethod
    def _parse_arguments(cls, value: Any) -> Any:
        if isinstance(value, str):
            try:
                value = json.loads(value)
            except (ValueError, RecursionError):
                raise ValueError("arguments are not valid JSON") from None
        if not isinstance(value, dict):
            raise ValueError(f"arguments must be a JSON object, not {_json_kind(value)}")
        return value


class ToolCall(_Shape):
    """One entry of a chat reply's `tool_calls`, with its arguments parsed."""

    id: str = Field(min_length=1)
    """What the `tool` message answering this call must quote as `tool_call_id`."""
    type: Literal["function"]
    function: FunctionCall


# ---- Responses API: computer use ----------------------------------------------------------------


class _Point(_Shape):
    x: Number
    y: Number


class PathPoint(_Point):
    """One point of a `drag` path, in display pixels."""


class ClickAction(_Point):
    type: Literal["click"]
    button: str = "left"
    """`left`, `right`, `wheel`, `back` or `forward`; which ones a caller can carry out is its business."""


class DoubleClickAction(_Point):
    type: Literal["double_click"]


class MoveAction(_Point):
    type: Literal["move"]


class DragAction(_Shape):
    type: Literal["drag"]
    path: list[PathPoint]


class ScrollAction(_Point):
    type: Literal["scroll"]
    scroll_x: Number | None = None
    scroll_y: Number | None = None


class KeypressAction(_Shape):
    type: Literal["keypress"]
    keys: list[str]


class TypeAction(_Shape):
    type: Literal["type"]
    text: str


class WaitAction(_Shape):
    type: Literal["wait"]


class ScreenshotAction(_Shape):
    type: Literal["screenshot"]


ComputerAction = Annotated[
    ClickAction | DoubleClickAction | MoveAction | DragAction | ScrollAction | KeypressAction | TypeAction
    | WaitAction | ScreenshotAction,
    Field(discriminator="type"),
]
"""One computer-use action, told apart by its `type`; coordinates are display pixels."""


class ComputerCall(_Shape):
    """A `computer_call` output item: one `action`, or an `actions` batch, to carry out in order."""

    type: Literal["computer_call"]
    call_id: str = Field(min_length=1)
    """What the `computer_call_output` answering this call must quote."""
    action: ComputerAction | None = None
    actions: list[ComputerAction] | None = None
    pending_safety_checks: list[dict[str, Any]] = Field(default_factory=list)
    """Checks the answer must acknowledge, as received (each an object with `id`, `code`, `message`)."""

    @field_validator("pending_safety_checks", mode="before")
    @classmethod
    def _no_checks(cls, value: Any) -> Any:
        return [] if value is None else value

    @model_validator(mode="after")
    def _has_an_action(self) -> ComputerCall:
        if self.action is None and self.actions is None:
            raise ValueError("a computer_call needs an 'action' object or an 'actions' list")
        return self

    @property
    def batch(self) -> list[ComputerAction]:
        """The actions in order: the `actions` batch when there is one, else the single `action`."""
        return list(self.actions) if self.actions is not None else [self.action]  # one of them: see validation


class _MessagePart(_Shape):
    type: str

    @model_validator(mode="before")
    @classmethod
    def _text_is_text(cls, value: Any) -> Any:
        if isinstance(value, dict) and value.get("type") == "output_text" and not isinstance(value.get("text"), str):
            raise ValueError("an output_text part needs a string 'text'")
        return value


class _ResponseMessage(_Shape):
    type: Literal["message"]
    content: list[_MessagePart]


_tool_calls = TypeAdapter(list[ToolCall])


def check_tool_calls(message: dict[str, Any]) -> tuple[list[ToolCall], str | None]:
    """A chat message's `tool_calls`, validated: (the calls, None), or ([], why one is malformed)."""
    raw = message.get("tool_calls")
    if raw is None:
        return [], None
    try:
        return _tool_calls.validate_python(raw), None
    except ValidationError as error:
        return [], _describe("tool_calls", error)


def check_output_items(items: Iterable[dict[str, Any]]) -> tuple[list[ComputerCall], list[str], str | None]:
    """The `computer_call` and `message` items of a Responses output, validated.

    Returns the well-formed computer calls, the `call_id` of every computer call that has one
    (malformed or not: each must be answered on the next turn), and why the first malformed
    item is malformed (None when none is).
    """
    calls: list[ComputerCall] = []
    call_ids: list[str] = []
    problem: str | None = None
    for index, item in enumerate(items):
        kind = item.get("type")
        try:
            if kind == "computer_call":
                call_id = item.get("call_id")
                if isinstance(call_id, str) and call_id:
                    call_ids.append(call_id)
                calls.append(ComputerCall.model_validate(item))
            elif kind == "message":
                _ResponseMessage.model_validate(item)
        except ValidationError as error:
            problem = problem or _describe(f"{kind} output[{index}]", error)
    return calls, call_ids, problem


def _describe(where: str, error: ValidationError) -> str:
    """The first problem of `error` as `where[0].field: message`, without quoting the input."""
    problems = error.errors(include_input=False, include_url=False, include_context=False)
    first = problems[0]
    location = "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in first["loc"])
    message = first["msg"].removeprefix("Value error, ")  # pydantic's prefix for a validator's ValueError
    text = f"{where}{location}: {message}"
    if len(problems) > 1:
        text += f" (and {len(problems) - 1} more)"
    return text if len(text) <= _PROBLEM_LIMIT else text[: _PROBLEM_LIMIT - 1] + "…"


def _json_kind(value: Any) -> str:
    return {list: "an array", str: "a string", bool: "a boolean", type(None): "null"}.get(type(value), "a number")
