"""The project's action language and observations as Gymnasium spaces, and every form `step` accepts.

Action space (screen pixels of the viewport, MiniWoB++'s shape): a `Dict` of

    kind       Discrete(10)   KINDS[kind]: click, left_double, right_single, drag, hotkey, type, scroll, wait, finished, move
    point      Box(2,)        where a pointer action acts (drag: its start)
    end        Box(2,)        where a drag ends
    direction  Discrete(4)    DIRECTIONS[direction] of a scroll: up, down, left, right
    keys       Text           a hotkey's keys, separated by spaces or '+': "ctrl a", "ctrl+a", "enter"
    text       Text           what `type` types (a trailing newline submits); `finished`'s answer
    amount     Box(1,)        a scroll's distance in pixels (0: the executor's default)

of which each kind reads only its own fields (`cua.Action`'s rule). `to_action` also takes a
`cua.Action` (screen pixels), a dict in the project's JSON form (`{"kind": "click", "point": {"x": …,
"y": …}}`), a UI-TARS reply string (`cua.parse_uitars`, its points in the `uitars-1.5` space unless
the environment says otherwise) and an OpenAI computer-use action item (`cua.parse_computer_action`,
display pixels = the viewport). Anything else, or a value that is not a valid action, is an
`InvalidAction` naming the field and the value.

Text in observations is drawn from `CHARSET` (Latin, Greek, Cyrillic, punctuation, currency, arrows,
maths, shapes and dingbats): a character outside it (an emoji, CJK) becomes U+FFFD, so an
observation always lies in its space.
"""

from __future__ import annotations

import io
import math
import string
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, get_args

import numpy as np
from gymnasium import spaces
from PIL import Image
from pydantic import ValidationError

from cua import Action, ActionKind, ParseError, Point, UnusableReply, Viewport, parse_computer_action, parse_uitars

KINDS: tuple[str, ...] = get_args(ActionKind)
"""The action kinds in the order of the `kind` field's Discrete values."""
DIRECTIONS: tuple[str, ...] = ("up", "down", "left", "right")
"""Scroll directions in the order of the `direction` field's Discrete values."""

MAX_KEYS_CHARS = 32
MAX_TYPED_CHARS = 256
MAX_SCROLL_PX = 5_000
GOAL_MAX_CHARS = 2_000
REPLACEMENT = "\ufffd"

_RANGES = ((0x20, 0x7F), (0xA0, 0x250), (0x370, 0x500), (0x2000, 0x2070), (0x20A0, 0x20D0), (0x2100, 0x2150),
           (0x2190, 0x2400), (0x2500, 0x27C0))
CHARSET: frozenset[str] = frozenset(chr(code) for low, high in _RANGES for code in range(low, high)) | {"\n", "\t", REPLACEMENT}
"""The characters of the `goal` and `text` observations (others are replaced by U+FFFD)."""
_TYPED_CHARSET = string.ascii_letters + string.digits + string.punctuation + " \n"
_KEYS_CHARSET = string.ascii_letters + string.digits + "+- "


class InvalidAction(ValueError):
    """An action `step` refuses: not one of the accepted forms, a field missing or of the wrong type, an
    unknown kind, a point off the screen. Nothing was executed and the step was not counted."""


@lru_cache(maxsize=None)
def _text(max_length: int, min_length: int, charset: frozenset[str] | str) -> spaces.Text:
    # Spaces are shared between environments: building a Text's index of characters is not free.
    return spaces.Text(max_length, min_length=min_length, charset=charset)


def action_space(viewport: Viewport) -> spaces.Dict:
    """The action space of an environment of this viewport (points in its pixels)."""
    corner = np.array([viewport.width - 1, viewport.height - 1], dtype=np.float32)
    return spaces.Dict({
        "kind": spaces.Discrete(len(KINDS)),
        "point": spaces.Box(low=np.zeros(2, dtype=np.float32), high=corner, dtype=np.float32),
        "end": spaces.Box(low=np.zeros(2, dtype=np.float32), high=corner.copy(), dtype=np.float32),
        "direction": spaces.Discrete(len(DIRECTIONS)),
        "keys": _text(MAX_KEYS_CHARS, 1, _KEYS_CHARSET),
        "text": _text(MAX_TYPED_CHARS, 0, _TYPED_CHARSET),
        "amount": spaces.Box(low=0.0, high=float(MAX_SCROLL_PX), shape=(1,), dtype=np.float32),
    })


def observation_space(viewport: Viewport, text_max_chars: int | None) -> spaces.Dict:
    """`screenshot` (H×W×3 uint8) and `goal`, with `text` (the page's visible text) when `text_max_chars` is set."""
    fields: dict[str, spaces.Space] = {
        "screenshot": spaces.Box(low=0, high=255, shape=(viewport.height, viewport.width, 3), dtype=np.uint8),
        "goal": _text(GOAL_MAX_CHARS, 1, CHARSET),
    }
    if text_max_chars is not None:
        fields["text"] = _text(text_max_chars, 0, CHARSET)
    return spaces.Dict(fields)


def in_charset(text: str, max_chars: int) -> str:
    """`text` cut to `max_chars`, every character outside `CHARSET` replaced by U+FFFD."""
    return "".join(char if char in CHARSET else REPLACEMENT for char in text[:max_chars])


def decode_png(png: bytes, viewport: Viewport) -> np.ndarray:
    """A screenshot as a new, writable H×W×3 uint8 array; RuntimeError when it is not the viewport's size (the
    page's scale is not 1)."""
    with Image.open(io.BytesIO(png)) as image:
        if image.mode != "RGB":  # Chromium's screenshots are RGB already: no conversion, no copy of one
            image = image.convert("RGB")
        # One copy of the decoded pixels (into a writable buffer), not three (convert, __array_interface__, np.array).
        frame = np.frombuffer(bytearray(image.tobytes()), dtype=np.uint8).reshape(image.height, image.width, 3)
    if frame.shape != (viewport.height, viewport.width, 3):
        raise RuntimeError(f"the screenshot is {frame.shape[1]}×{frame.shape[0]}, not the viewport's {viewport}")
    return frame


@dataclass
class Prepared:
    """An action `step` accepted: the action, its points' space, and the reply it came from (if any)."""

    action: Action
    space: str
    raw_text: str = ""
    thought: str = ""


def to_action(action: Any, uitars_space: str) -> Prepared:
    """The `cua.Action` an accepted form means, and the coordinate space of its points; InvalidAction for what is
    not an accepted form, or not a valid action of it (the message names the field and value)."""
    if isinstance(action, Action):
        return Prepared(action, "screen")
    if isinstance(action, str):
        return _from_reply(action, uitars_space)
    if isinstance(action, dict):
        if "type" in action and "kind" not in action:
            return Prepared(_from_computer_use(action), "openai-cua")
        if "kind" not in action:
            raise InvalidAction(f"an action dict needs 'kind' (ours) or 'type' (computer use); got keys {sorted(map(str, action))}")
        if isinstance(action["kind"], (str, bytes)):
            return Prepared(_from_json(action), "screen")
        return Prepared(_from_space(action), "screen")
    raise InvalidAction(f"an action is a cua.Action, a dict of the action space or of the project's JSON form, a "
                        f"computer-use item (dict) or a UI-TARS reply (str); got {type(action).__name__}")


def _from_reply(reply: str, space: str) -> Prepared:
    try:
        parsed = parse_uitars(reply)
    except ParseError as error:
        raise InvalidAction(f"UI-TARS reply: {error}") from None
    actions = parsed.actions
    if len(actions) != 1:
        raise InvalidAction(f"UI-TARS reply: {len(actions)} actions; a step takes one (step them one reply at a time)")
    return Prepared(actions[0], space, raw_text=reply, thought=parsed.thought)


def _from_computer_use(item: dict) -> Action:
    try:
        parsed = parse_computer_action(item)
    except UnusableReply as error:
        raise InvalidAction(f"computer-use item: {error}") from None
    if parsed is None:
        raise InvalidAction("computer-use item: 'screenshot' does nothing here (every observation holds one)")
    return parsed


def _from_json(action: dict) -> Action:
    try:
        return Action.model_validate(action)
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "action"
        value = first.get("input")
        shown = f" (got {value!r})" if where != "action" and not isinstance(value, dict) else ""
        raise InvalidAction(f"action field '{where}': {first['msg'].removeprefix('Value error, ')}{shown}") from None


def _from_space(action: dict) -> Action:
    kind_index = _whole(action["kind"], "kind")
    if not 0 <= kind_index < len(KINDS):
        raise InvalidAction(f"action field 'kind': {kind_index} is not a kind (0–{len(KINDS) - 1}: {', '.join(KINDS)})")
    kind = KINDS[kind_index]
    fields: dict[str, Any] = {"kind": kind}
    if kind in ("click", "left_double", "right_single", "drag", "scroll", "move"):
        fields["point"] = _point(action, "point")
    if kind == "drag":
        fields["end"] = _point(action, "end")
    if kind == "scroll":
        direction = _whole(_field(action, "direction"), "direction")
        if not 0 <= direction < len(DIRECTIONS):
            raise InvalidAction(f"action field 'direction': {direction} is not a direction (0–3: {', '.join(DIRECTIONS)})")
        fields["direction"] = DIRECTIONS[direction]
        amount = action.get("amount")
        if amount is not None:
            fields["amount"] = _number(np.asarray(amount, dtype=object).reshape(-1)[0], "amount") or None
    if kind == "hotkey":
        keys = _string(_field(action, "keys"), "keys")
        fields["keys"] = [keys] if keys.strip() == "+" else [key for key in keys.replace("+", " ").split() if key]
    if kind == "type" or kind == "finished" and action.get("text"):
        fields["text"] = _string(_field(action, "text"), "text")
    return _from_json(fields)


def _field(action: dict, name: str) -> Any:
    if name not in action or action[name] is None:
        raise InvalidAction(f"action field '{name}' is missing (a '{KINDS[_whole(action['kind'], 'kind')]}' needs it)")
    return action[name]


def _whole(value: Any, name: str) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        if isinstance(value, np.ndarray) and value.shape == () and np.issubdtype(value.dtype, np.integer):
            return int(value)
        raise InvalidAction(f"action field '{name}': expected an integer, got {value!r} ({type(value).__name__})")
    return int(value)


def _number(value: Any, name: str) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise InvalidAction(f"action field '{name}': expected a number, got {value!r}") from None
    if not math.isfinite(number) or number < 0 and name == "amount":
        raise InvalidAction(f"action field '{name}': {number!r} is not a finite{' non-negative' if name == 'amount' else ''} number")
    return number


def _point(action: dict, name: str) -> Point:
    raw = _field(action, name)
    try:
        values = np.asarray(raw, dtype=np.float64).reshape(-1)
    except (TypeError, ValueError):
        raise InvalidAction(f"action field '{name}': expected two numbers (x, y), got {raw!r}") from None
    if values.shape != (2,):
        raise InvalidAction(f"action field '{name}': expected two numbers (x, y), got {values.size}")
    return Point(x=_number(values[0], name), y=_number(values[1], name))


def _string(value: Any, name: str) -> str:
    if not isinstance(value, str):
        raise InvalidAction(f"action field '{name}': expected a string, got {value!r} ({type(value).__name__})")
    return str(value)  # a numpy str_ (of a sampled Text space) as a plain str
