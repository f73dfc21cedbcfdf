"""UI-TARS reply text → thought and actions, with a small hand-written scanner (never `eval`).

A reply looks like::

    Thought: The Add button is at the top right.
    Action: click(start_box='<|box_start|>(1204,88)<|box_end|>')

Points come as ``point='<point>x y</point>'``, ``start_box='(x,y)'``,
``'<|box_start|>(x,y)<|box_end|>'`` or a four-number box (its centre is used). Several actions
may follow one ``Action:``. Coordinates stay in the model's own space; `cua._coordinates`
converts them and decides what to do with points off the screen. A coordinate is a decimal
number as models write it (``12``, ``-3``, ``+12``, ``.5``, ``5.``, ``1.5e2``); anything else
between the point's brackets, a value that is not finite (``inf``, ``nan``, ``1e309``), or the
wrong count of numbers (a point is 2, a box 4) is a `ParseError` — never a guess at the numbers
meant. `format_uitars` writes the same grammar back (for history and scripted tests).

`UITARS_ACTIONS` is the grammar in one table: the parser accepts each action's name and aliases,
the UI-TARS prompts list canonical calls (`cua.policies._uitars_prompts`), `format_uitars` writes
them. A prompt offers a subset of the table (the published UI-TARS-1.5 template has no `hover`,
only the 1.0 template has `call_user`); `parse_uitars(text, offered=...)` then refuses the rest.
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection
from dataclasses import dataclass, field

from ._actions import Action, ActionKind, Point

_CALL_START = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s*\(")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_SPACE = re.compile(r"\s*")
_BARE_VALUE = re.compile(r"[^,)]*")
# A coordinate: sign, digits with an optional fraction (or a bare fraction), optional exponent.
# ASCII digits only: `float` would also read other scripts' digits.
_NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_NON_FINITE_WORD = re.compile(r"[+-]?(?:inf(?:inity)?|nan)", re.IGNORECASE)
# What may wrap a point's numbers: <point>…</point>, <|box_start|>…<|box_end|>, <bbox>…</bbox>,
# brackets. Removed before the rest is split on commas and spaces into numbers.
_POINT_MARKUP = re.compile(r"<\|?/?[A-Za-z_]*\|?>|[()\[\]]")
_POINT_TAG = re.compile(r"</?point>", re.IGNORECASE)
_ACTION_MARKER = re.compile(r"^\s*Action\s*:", re.IGNORECASE | re.MULTILINE)
_THOUGHT_LABELS = re.compile(r"^\s*(Thought|Reflection|Action_Summary)\s*:\s*", re.IGNORECASE | re.MULTILINE)


@dataclass(frozen=True)
class UITarsAction:
    """One action of the UI-TARS grammar: how the prompt offers it and what the parser makes of it."""

    name: str  # the canonical spelling: offered in the prompt, written by `format_uitars`
    kind: ActionKind
    arguments: str  # the argument form the prompt shows, e.g. "point='<point>x y</point>'"
    meaning: str  # one line for the prompt
    aliases: tuple[str, ...] = ()  # other spellings models use, accepted as this action


# The actions `parse_uitars` accepts, in the order the prompt lists them. Argument spellings are
# tolerated more widely than shown (`start_box='(x,y)'`, boxes, positional values; see `_to_action`).
UITARS_ACTIONS: tuple[UITarsAction, ...] = (
    UITarsAction("click", "click", "point='<point>x y</point>'", "left click", ("left_single", "left_click")),
    UITarsAction("left_double", "left_double", "point='<point>x y</point>'", "double click", ("double_click",)),
    UITarsAction("right_single", "right_single", "point='<point>x y</point>'", "right click", ("right_click",)),
    UITarsAction(
        "drag",
        "drag",
        "start_point='<point>x1 y1</point>', end_point='<point>x2 y2</point>'",
        "press at the first point, move to the second, release",
        ("select",),
    ),
    UITarsAction(
        "hover", "move", "point='<point>x y</point>'", "move the pointer there without clicking", ("mouse_move", "move")
    ),
    UITarsAction("hotkey", "hotkey", "key='ctrl c'", "keys held together, separated by spaces", ("press", "keypress")),
    UITarsAction(
        "type", "type", "content='text'", r"types into the focused field; end with \n to submit (press Enter)"
    ),
    UITarsAction(
        "scroll",
        "scroll",
        "point='<point>x y</point>', direction='down'",
        "or up, left, right; scrolls what is under the point",
    ),
    UITarsAction("wait", "wait", "", "let the page change, then look again"),
    UITarsAction("finished", "finished", "content='summary'", "the task is done", ("finish",)),
    # The model asks for help (UI-TARS-1.0's template offers it): the episode ends like `finished`,
    # its text saying so. A distinct action, not a spelling of `finished`: a prompt offers it or not.
    UITarsAction("call_user", "finished", "", "ask the user for help; ends the task"),
)

_ACTION_BY_NAME = {name: action for action in UITARS_ACTIONS for name in (action.name, *action.aliases)}
# How a kind is written: the first action of that kind in the table (`finished`, not `call_user`).
_NAME_BY_KIND = {action.kind: action.name for action in reversed(UITARS_ACTIONS)}
_POINT_ARGS = ("point", "start_box", "start_point", "box", "position", "coordinate")
_END_ARGS = ("end_box", "end_point")
_DIRECTIONS = {"up", "down", "left", "right"}


class ParseError(ValueError):
    """The reply is not in the action grammar; the message says what was expected where."""


@dataclass
class ParsedReply:
    thought: str
    actions: list[Action]
    calls: list[str] = field(default_factory=list)  # the call texts as written, for the record


def parse_uitars(text: str, offered: Collection[str] | None = None) -> ParsedReply:
    """Parse a UI-TARS reply into its thought and actions (in the model's coordinate space).

    `offered` names the actions (canonical names of `UITARS_ACTIONS`) the prompt offered; a call of
    any other action — under any of its spellings — is refused. None accepts the whole table.

    Raises:
        ParseError: no action, an unknown action name, an action not offered, a malformed call or
            argument, a coordinate that is not a finite number, or a point/box with the wrong count
            of numbers. Whether a point lies on the screen is not judged here (`cua.place_action`).
        ValueError: `offered` names an action the grammar does not have.
    """
    if offered is not None:
        unknown = sorted(set(offered) - {action.name for action in UITARS_ACTIONS})
        if unknown:
            raise ValueError(f"offered names actions the UI-TARS grammar does not have: {unknown}")
    if not text or not text.strip():
        raise ParseError("empty reply: expected 'Thought: …' and 'Action: name(arg=…)'")
    # The last "Action:" line starts the actions (earlier ones may be quoted in the thought).
    marker = max(_ACTION_MARKER.finditer(text), key=lambda found: found.start(), default=None)
    strict = marker is not None
    thought_text, action_text = (text[: marker.start()], text[marker.end() :]) if strict else ("", text)
    thought = _THOUGHT_LABELS.sub("", thought_text).strip()

    actions: list[Action] = []
    calls: list[str] = []
    position = 0
    while (match := _CALL_START.search(action_text, position)) is not None:
        name = match.group(1).lower()
        if name not in _ACTION_BY_NAME:
            if strict:
                known = ", ".join(action.name for action in UITARS_ACTIONS)
                raise ParseError(f"unknown action '{match.group(1)}' (known: {known})")
            position = match.end()
            continue
        if offered is not None and _ACTION_BY_NAME[name].name not in offered:
            raise ParseError(f"action '{match.group(1)}' is not offered by the prompt (offered: {', '.join(offered)})")
        arguments, end = _scan_arguments(action_text, match.end())
        calls.append(action_text[match.start() : end].strip())
        actions.append(_to_action(name, arguments))
        position = end
    if not actions:
        where = "after 'Action:'" if strict else "in the reply (and no 'Action:' line)"
        raise ParseError(f"no action call found {where}; expected e.g. click(start_box='(x,y)')")
    return ParsedReply(thought=thought, actions=actions, calls=calls)


def _scan_arguments(text: str, index: int) -> tuple[dict[str, str], int]:
    """Arguments of a call whose '(' ends just before `index`; returns them and the index after ')'."""
    arguments: dict[str, str] = {}
    positional = 0
    while True:
        index = _SPACE.match(text, index).end()
        if index >= len(text):
            raise ParseError("unterminated call: missing ')'")
        if text[index] == ")":
            return arguments, index + 1
        key_match = _IDENTIFIER.match(text, index)
        after_key = _SPACE.match(text, key_match.end()).end() if key_match else index
        if key_match and after_key < len(text) and text[after_key] == "=":
            key = key_match.group(0).lower()
            index = _SPACE.match(text, after_key + 1).end()
        else:
            key = f"_{positional}"
            positional += 1
        value, index = _scan_value(text, index)
        arguments[key] = value
        index = _SPACE.match(text, index).end()
        if index < len(text) and text[index] == ",":
            index += 1
        elif index < len(text) and text[index] != ")":
            raise ParseError(f"expected ',' or ')' after argument '{key}', found {text[index:index + 12]!r}")


def _scan_value(text: str, index: int) -> tuple[str, int]:
    if index >= len(text):
        raise ParseError("missing argument value at end of reply")
    opener = text[index]
    if opener in "'\"":
        return _scan_string(text, index)
    if opener in "([":
        closer = ")" if opener == "(" else "]"
        end = text.find(closer, index + 1)
        if end < 0:
            raise ParseError(f"unterminated {opener}…{closer} in argument")
        return text[index : end + 1], end + 1
    end = _BARE_VALUE.match(text, index).end()
    return text[index:end].strip(), end


_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", "'": "'", '"': '"'}


def _scan_string(text: str, index: int) -> tuple[str, int]:
    """A quoted string with Python-style escapes. An unescaped quote only closes the string when
    what follows is ')' or ', name=' — models often leave apostrophes in content unescaped."""
    quote = text[index]
    out: list[str] = []
    i = index + 1
    while i < len(text):
        char = text[i]
        if char == "\\" and i + 1 < len(text):
            following = text[i + 1]
            out.append(_ESCAPES.get(following, char + following))
            i += 2
            continue
        if char == quote and _closes_string(text, i + 1):
            return "".join(out), i + 1
        out.append(char)
        i += 1
    raise ParseError(f"unterminated string starting {text[index:index + 20]!r}")


def _closes_string(text: str, index: int) -> bool:
    rest = text[index:].lstrip(" \t")
    if not rest or rest[0] == ")":
        return True
    return rest[0] == "," and re.match(r",\s*([A-Za-z_][A-Za-z0-9_]*\s*=|['\"]|\))", rest) is not None


def _to_action(name: str, arguments: dict[str, str]) -> Action:
    kind = _ACTION_BY_NAME[name].kind
    try:
        match kind:
            case "click" | "left_double" | "right_single" | "move":
                return Action(kind=kind, point=_point(arguments, _POINT_ARGS, name))
            case "drag":
                return Action(kind=kind, point=_point(arguments, _POINT_ARGS, name), end=_point(arguments, _END_ARGS, name))
            case "scroll":
                direction = (arguments.get("direction") or arguments.get("_1") or "down").strip().lower()
                if direction not in _DIRECTIONS:
                    raise ParseError(f"scroll direction must be up/down/left/right, got {direction!r}")
                return Action(kind=kind, point=_point(arguments, _POINT_ARGS, name), direction=direction)
            case "hotkey":
                raw = arguments.get("key") or arguments.get("keys") or arguments.get("hotkey") or arguments.get("_0")
                keys = [k for k in re.split(r"[\s+]+", (raw or "").strip()) if k]
                if not keys:
                    raise ParseError(f"{name}() needs key='…', e.g. hotkey(key='ctrl c')")
                return Action(kind=kind, keys=[k.lower() for k in keys])
            case "type":
                content = arguments.get("content", arguments.get("text", arguments.get("_0")))
                if content is None:
                    raise ParseError("type() needs content='…'")
                return Action(kind=kind, text=content)
            case "finished":
                text = arguments.get("content", arguments.get("_0"))
                return Action(kind=kind, text=text if name != "call_user" else (text or "call_user"))
            case _:
                return Action(kind="wait")
    except ValueError as exc:  # pydantic's validation of the action
        if isinstance(exc, ParseError):
            raise
        raise ParseError(f"{name}(): {str(exc).splitlines()[-1]}") from None


def _point(arguments: dict[str, str], names: tuple[str, ...], call: str) -> Point:
    name = next((n for n in names if n in arguments), None)
    if name is None and names is _POINT_ARGS and "_0" in arguments:
        name = "_0"
    if name is None:
        raise ParseError(f"{call}() needs {names[0]}='<point>x y</point>' (or {names[1]}='(x,y)')")
    raw = arguments[name]
    numbers = _numbers(raw, call)
    # A point argument (`point=`, `start_point=`, a <point> tag) is x y; a box argument
    # (`start_box=`, a bracketed or <|box_start|> value) is x y as UI-TARS writes points, or a box.
    point_only = name.endswith("point") or _POINT_TAG.search(raw) is not None
    if len(numbers) == 2:
        return Point(x=numbers[0], y=numbers[1])
    if len(numbers) == 4 and not point_only:
        # Its centre; halves first, so corners near the float limit cannot add up to infinity.
        return Point(x=numbers[0] / 2 + numbers[2] / 2, y=numbers[1] / 2 + numbers[3] / 2)
    found = ", ".join(f"{n:g}" for n in numbers[:6]) + (", …" if len(numbers) > 6 else "") or "none"
    expected = "2 numbers (a point: x y)" if point_only else "2 or 4 numbers (a point x y, or a box x1 y1 x2 y2)"
    raise ParseError(f"{call}(): expected {expected} in {name}={raw[:80]!r}, found {len(numbers)} ({found})")


def _numbers(raw: str, call: str) -> list[float]:
    """The coordinates written in a point or box value, each a finite number.

    Raises:
        ParseError: something other than markup, separators and numbers, or a value that is not finite.
    """
    numbers: list[float] = []
    for token in re.split(r"[\s,]+", _POINT_MARKUP.sub(" ", raw)):
        if not token:
            continue
        if _NON_FINITE_WORD.fullmatch(token):
            raise ParseError(f"{call}(): {token!r} in {raw[:80]!r} is not a finite coordinate")
        if not _NUMBER.fullmatch(token):
            raise ParseError(
                f"{call}(): {token[:40]!r} in {raw[:80]!r} is not a number; write coordinates as digits, "
                "e.g. '<point>120 340</point>'"
            )
        value = float(token)
        if not math.isfinite(value):  # e.g. 1e309: valid digits, but beyond the largest float
            raise ParseError(f"{call}(): {token[:40]!r} in {raw[:80]!r} overflows to infinity: not a finite coordinate")
        numbers.append(value)
    return numbers


def format_uitars(action: Action, thought: str | None = None) -> str:
    """The action in UI-TARS-1.5 grammar (points as `<point>x y</point>`), optionally with a Thought."""

    def point(p: Point | None) -> str:
        return f"<point>{_number(p.x)} {_number(p.y)}</point>" if p else ""

    def quoted(value: str) -> str:
        return "'" + value.replace("\\", "\\\\").replace("'", "\\'").replace("\n", "\\n") + "'"

    match action.kind:
        case "drag":
            call = f"drag(start_point='{point(action.point)}', end_point='{point(action.end)}')"
        case "scroll":
            call = f"scroll(point='{point(action.point)}', direction='{action.direction}')"
        case "hotkey":
            call = f"hotkey(key={quoted(' '.join(action.keys))})"
        case "type":
            call = f"type(content={quoted(action.text or '')})"
        case "finished":
            call = f"finished(content={quoted(action.text or '')})"
        case "wait":
            call = "wait()"
        case _:  # one point: click, left_double, right_single, move
            call = f"{_NAME_BY_KIND[action.kind]}(point='{point(action.point)}')"
    return f"Thought: {thought}\nAction: {call}" if thought is not None else f"Action: {call}"


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:.1f}"
