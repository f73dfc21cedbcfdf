"""The action language in OpenAI computer-use form: one computer action item ↔ one of our actions.

The Responses API's `computer_call` items carry actions such as `{"type": "click", "x": 10, "y": 20,
"button": "left"}` in display pixels (the `openai-cua` space). `parse_computer_action` reads one
(validated by `llm.ComputerAction`, so a malformed item is refused like a malformed reply);
`format_computer_action` writes one of ours in that form — for datasets (`results.export_dataset`)
and for environments that take either form (`environments`). `finished` has no computer action (the
model ends with a message instead), so it formats to None.
"""

from __future__ import annotations

from typing import Any

from pydantic import TypeAdapter, ValidationError

from llm import ComputerAction

from ._actions import Action, Point

_ITEM = TypeAdapter(ComputerAction)


class UnusableReply(ValueError):
    """A well-formed computer call we cannot execute (a button we do not have, a drag without a path)."""


def parse_computer_action(item: ComputerAction | dict[str, Any]) -> Action | None:
    """One computer-use action as ours (display pixels); None for `screenshot`.

    Raises:
        UnusableReply: not a computer action (its error names the field), or one we cannot carry out
            (a `back` button, a drag path of one point, a keypress without keys).
    """
    if isinstance(item, dict):
        try:
            item = _ITEM.validate_python(item)
        except ValidationError as error:
            first = error.errors()[0]
            where = ".".join(str(part) for part in first["loc"]) or "item"
            raise UnusableReply(f"not a computer action: {where}: {first['msg']}") from None
    try:
        return _to_action(item)
    except UnusableReply:
        raise
    except (TypeError, ValueError) as exc:
        raise UnusableReply(f"{item.type}: {str(exc).splitlines()[-1]}") from None


def _to_action(action: ComputerAction) -> Action | None:
    match action.type:
        case "screenshot":
            return None
        case "click":
            if action.button not in ("left", "right", "wheel", "middle"):
                raise UnusableReply(f"click with button {action.button!r} is not supported")
            return Action(kind="right_single" if action.button == "right" else "click", point=_point(action))
        case "double_click":
            return Action(kind="left_double", point=_point(action))
        case "move":
            return Action(kind="move", point=_point(action))
        case "drag":
            if len(action.path) < 2:
                raise UnusableReply("drag needs a path of at least two points")
            return Action(kind="drag", point=_point(action.path[0]), end=_point(action.path[-1]))
        case "scroll":
            dx, dy = float(action.scroll_x or 0), float(action.scroll_y or 0)
            if abs(dy) >= abs(dx):
                direction, amount = ("down" if dy >= 0 else "up"), abs(dy)
            else:
                direction, amount = ("right" if dx > 0 else "left"), abs(dx)
            return Action(kind="scroll", point=_point(action), direction=direction, amount=amount or None)
        case "keypress":
            if not action.keys:
                raise UnusableReply("keypress without keys")
            return Action(kind="hotkey", keys=[k.lower() for k in action.keys])
        case "type":
            return Action(kind="type", text=action.text)
        case "wait":
            return Action(kind="wait")
    raise UnusableReply(f"unknown computer action type {action.type!r}")  # the validator admits only the types above


DEFAULT_SCROLL_PX = 300
"""The distance a formatted scroll names when ours has none (ours then scrolls by the executor's default)."""


def format_computer_action(action: Action) -> dict[str, Any] | None:
    """Our action as a computer-use action item (its points as they are: give it display pixels);
    None for `finished`, which computer use says with a message, not an action."""
    point = {"x": _whole(action.point.x), "y": _whole(action.point.y)} if action.point is not None else {}
    match action.kind:
        case "click" | "right_single":
            return {"type": "click", **point, "button": "left" if action.kind == "click" else "right"}
        case "left_double":
            return {"type": "double_click", **point}
        case "move":
            return {"type": "move", **point}
        case "drag":
            return {"type": "drag", "path": [point, {"x": _whole(action.end.x), "y": _whole(action.end.y)}]}
        case "scroll":
            amount = action.amount if action.amount is not None else DEFAULT_SCROLL_PX
            dx = {"left": -amount, "right": amount}.get(action.direction, 0)
            dy = {"up": -amount, "down": amount}.get(action.direction, 0)
            return {"type": "scroll", **point, "scroll_x": _whole(dx), "scroll_y": _whole(dy)}
        case "hotkey":
            return {"type": "keypress", "keys": [key.upper() if len(key) > 1 else key for key in action.keys]}
        case "type":
            return {"type": "type", "text": action.text or ""}
        case "wait":
            return {"type": "wait"}
    return None  # finished


def _point(where: Any) -> Point:
    return Point(x=where.x, y=where.y)


def _whole(value: float) -> int | float:
    return int(value) if float(value).is_integer() else value
