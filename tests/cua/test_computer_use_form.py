"""Our actions in OpenAI computer-use form and back: `format_computer_action` and `parse_computer_action` are
inverses on every kind computer use can say (`finished` it says with a message, not an action)."""

from __future__ import annotations

import pytest

from cua import Action, Point, UnusableReply, format_computer_action, parse_computer_action

ACTIONS = [
    Action(kind="click", point=Point(x=10, y=20)),
    Action(kind="right_single", point=Point(x=10.5, y=20)),
    Action(kind="left_double", point=Point(x=640, y=360)),
    Action(kind="move", point=Point(x=1, y=2)),
    Action(kind="drag", point=Point(x=1, y=2), end=Point(x=300, y=400)),
    Action(kind="scroll", point=Point(x=5, y=6), direction="down", amount=240),
    Action(kind="scroll", point=Point(x=5, y=6), direction="left", amount=120),
    Action(kind="hotkey", keys=["ctrl", "a"]),
    Action(kind="type", text="Ada Lovelace\n"),
    Action(kind="wait"),
]


@pytest.mark.parametrize("action", ACTIONS, ids=lambda action: action.describe())
def test_an_action_survives_the_computer_use_form(action):
    item = format_computer_action(action)
    assert item is not None and parse_computer_action(item) == action


def test_a_scroll_without_a_distance_names_the_default_and_finished_has_no_item():
    item = format_computer_action(Action(kind="scroll", point=Point(x=5, y=6), direction="up"))
    assert item == {"type": "scroll", "x": 5, "y": 6, "scroll_x": 0, "scroll_y": -300}
    assert format_computer_action(Action(kind="finished", text="42")) is None


def test_an_item_that_is_not_a_computer_action_is_refused_naming_the_field():
    with pytest.raises(UnusableReply, match="not a computer action: click.x"):
        parse_computer_action({"type": "click", "x": "left", "y": 3})
    with pytest.raises(UnusableReply, match="drag needs a path of at least two points"):
        parse_computer_action({"type": "drag", "path": [{"x": 1, "y": 2}]})
