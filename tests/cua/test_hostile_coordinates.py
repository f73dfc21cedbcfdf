"""Hostile coordinates in model replies, one table per way a model writes points.

Each row is one reply and what the harness makes of it — judged as the rollout judges a reply
before anything runs (parser or computer-use conversion, then `place_action` on a 1280×720
screen): a point used as is (`On`), a point clamped onto the screen with a note (`Clamped`), or
a refusal naming why (`Refused`: a `ParseError`, an `OffScreenPoint`, or the computer-use
policy's `UnusableReply`). The rule for points off the screen is the same in every space: up to
`EDGE_TOLERANCE` (2 %) of the extent past an edge is clamped, further out is refused. No browser
here; `test_rollout.py` and `test_env.py` show a refused point re-asked and never executed.
"""

from __future__ import annotations

import io
import json
import re
from dataclasses import dataclass

import pytest
from PIL import Image

from cua import EDGE_TOLERANCE, Action, Observation, OffScreenPoint, ParseError, Point, parse_uitars, place_action
from cua.policies import get_policy
from cua import UnusableReply, parse_computer_action
from llm import CallCache, ModelClient
from llm.testing import ScriptedOpenAIServer, reply_responses, scripted_registry

WIDTH, HEIGHT = 1280, 720
SX15, SY15 = WIDTH / 1288, HEIGHT / 728  # UI-TARS-1.5 answers in the smart-resized 1288×728 image
SX10, SY10 = WIDTH / 1000, HEIGHT / 1000  # UI-TARS-1.0 answers 0–1000 on each axis


@dataclass(frozen=True)
class On:
    """The point lands here on the screen (viewport pixels), with no note."""

    x: float
    y: float


@dataclass(frozen=True)
class Clamped:
    """The point was past an edge by at most the tolerance: moved onto the screen here, with a note."""

    x: float
    y: float


@dataclass(frozen=True)
class Refused:
    """Nothing to execute: `error` is raised, its message containing `reason`."""

    error: type[Exception]
    reason: str


Expected = On | Clamped | Refused


def judge(make_action, space: str, expected: Expected) -> None:
    """Run one row: build the action (which may refuse), place it, compare with what the row says."""
    if isinstance(expected, Refused):
        with pytest.raises(expected.error, match=re.escape(expected.reason)):
            place_action(make_action(), space, WIDTH, HEIGHT)
        return
    placed = place_action(make_action(), space, WIDTH, HEIGHT)
    point = placed.action.point
    assert (point.x, point.y) == pytest.approx((expected.x, expected.y), abs=0.01)
    if isinstance(expected, Clamped):
        [note] = placed.notes
        assert "past the edge" in note and f"clamped to screen pixel ({expected.x:g}" in note
    else:
        assert placed.notes == []


def the_action_of(reply: str) -> Action:
    [action] = parse_uitars(f"Thought: there.\nAction: {reply}").actions
    return action


def test_the_tolerance_is_two_percent():
    assert EDGE_TOLERANCE == 0.02  # the rows below are drawn around it


# ---- UI-TARS-1.5: pixels of the smart-resized 1288×728 image (2 %: 25.76 × 14.56) -------------

UITARS_15 = [
    pytest.param("click(start_box='(1e308,1e308)')", Refused(OffScreenPoint, "point (1e+308, 1e+308) is off the screen"),
                 id="1e308 is one number, far off: refused (once read as a box 1, 308, 1, 308)"),
    pytest.param("click(start_box='(1.5e2,300)')", On(150 * SX15, 300 * SY15), id="exponent 1.5e2 is 150"),
    pytest.param("click(start_box='(1E3,3e+2)')", On(1000 * SX15, 300 * SY15), id="capital E and signed exponent"),
    pytest.param("click(start_box='(+12,+34)')", On(12 * SX15, 34 * SY15), id="leading plus"),
    pytest.param("click(point='<point>.5 5.</point>')", On(0.5 * SX15, 5 * SY15), id="bare fraction and bare point"),
    pytest.param("click(start_box='(-3,300)')", Clamped(0, 300 * SY15), id="-3 is just past the left edge: clamped"),
    pytest.param("click(start_box='(1e309,300)')", Refused(ParseError, "'1e309' in '(1e309,300)' overflows to infinity"),
                 id="1e309 overflows: parse error"),
    pytest.param("click(start_box='(nan,300)')", Refused(ParseError, "'nan' in '(nan,300)' is not a finite coordinate"),
                 id="nan: parse error"),
    pytest.param("click(start_box='(inf,300)')", Refused(ParseError, "'inf' in '(inf,300)' is not a finite coordinate"),
                 id="inf: parse error"),
    pytest.param("click(start_box='(-Infinity,300)')", Refused(ParseError, "'-Infinity' in '(-Infinity,300)' is not a finite"),
                 id="-Infinity: parse error"),
    pytest.param("click(start_box='(100,200,300)')", Refused(ParseError, "found 3 (100, 200, 300)"),
                 id="a box of 3 numbers: parse error"),
    pytest.param("click(start_box='(100,200,300,400,500)')", Refused(ParseError, "expected 2 or 4 numbers"),
                 id="5 numbers: parse error"),
    pytest.param("click(point='<point>100 200 300 400</point>')",
                 Refused(ParseError, "expected 2 numbers (a point: x y) in point='<point>100 200 300 400</point>', found 4"),
                 id="a point given as a box: parse error"),
    pytest.param("click(start_box='(100,200,300,400)')", On(200 * SX15, 300 * SY15), id="a real box: its centre"),
    pytest.param("click(start_box='(0x10,20)')", Refused(ParseError, "'0x10' in '(0x10,20)' is not a number"),
                 id="hex: parse error"),
    pytest.param("click(start_box='(1_000,20)')", Refused(ParseError, "'1_000' in '(1_000,20)' is not a number"),
                 id="underscores Python would accept: parse error"),
    pytest.param("click(start_box='(12px,20)')", Refused(ParseError, "'12px' in '(12px,20)' is not a number"),
                 id="units: parse error"),
    # (1279.006, 719.011) on screen: inside the last pixel, held at its left/top edge like every point.
    pytest.param("click(start_box='(1287,727)')", On(WIDTH - 1, HEIGHT - 1), id="the last pixel: on screen, no note"),
    pytest.param("click(start_box='(1288,728)')", Clamped(WIDTH - 1, HEIGHT - 1), id="x = width, the edge itself: clamped"),
    pytest.param("click(start_box='(1313,400)')", Clamped(WIDTH - 1, 400 * SY15), id="25 px past the edge: clamped"),
    pytest.param("click(start_box='(1314,400)')", Refused(OffScreenPoint, "uitars-1.5 coordinates run 0–1288 × 0–728"),
                 id="26 px past the edge: refused"),
    pytest.param("click(start_box='(640,-15)')", Refused(OffScreenPoint, "point (640, -15) is off the screen"),
                 id="negative beyond the tolerance: refused"),
    pytest.param("click(start_box='(-40,300)')", Refused(OffScreenPoint, "point (-40, 300) is off the screen"),
                 id="negative x far out: refused"),
    pytest.param("click(start_box='(5000,-20)')", Refused(OffScreenPoint, "point (5000, -20) is off the screen"),
                 id="far off both ways: refused (once clamped to the corner)"),
    pytest.param("scroll(point='<point>1290 400</point>', direction='down')", Clamped(WIDTH - 1, 400 * SY15),
                 id="a scroll point just past the edge: clamped"),
]


@pytest.mark.parametrize(("reply", "expected"), UITARS_15)
def test_uitars_15_hostile_replies(reply, expected):
    judge(lambda: the_action_of(reply), "uitars-1.5", expected)


def test_a_drag_ending_far_off_the_screen_is_refused_naming_its_end():
    drag = the_action_of("drag(start_box='(10,20)', end_box='(99999,20)')")
    with pytest.raises(OffScreenPoint, match=re.escape("end point (99999, 20) is off the screen")):
        place_action(drag, "uitars-1.5", WIDTH, HEIGHT)


def test_the_clamping_note_says_what_was_answered_the_range_and_where_it_went():
    placed = place_action(the_action_of("click(start_box='(1290,400)')"), "uitars-1.5", WIDTH, HEIGHT)
    assert placed.notes == [
        "point (1290, 400) was past the edge of the uitars-1.5 range 0–1288 × 0–728 (within 2%); "
        "clamped to screen pixel (1279, 395.6) of 1280×720"
    ]


def test_a_refusal_tells_the_model_the_range_and_the_rule():
    with pytest.raises(OffScreenPoint) as refused:
        place_action(the_action_of("click(start_box='(1e308,1e308)')"), "uitars-1.5", WIDTH, HEIGHT)
    assert str(refused.value) == (
        "point (1e+308, 1e+308) is off the screen: uitars-1.5 coordinates run 0–1288 × 0–728 on this 1280×720 "
        "screen (a point up to 2% past an edge is moved onto it, one further out is refused)"
    )


# ---- UI-TARS-1.0: relative 0–1000 on each axis (2 %: 20) ------------------------------------------

UITARS_10 = [
    pytest.param("click(start_box='<|box_start|>(1e308,1e308)<|box_end|>')", Refused(OffScreenPoint, "off the screen"),
                 id="1e308: refused"),
    pytest.param("click(start_box='<|box_start|>(1.5e2,300)<|box_end|>')", On(150 * SX10, 300 * SY10), id="1.5e2 is 150"),
    pytest.param("click(start_box='(+12,.5)')", On(12 * SX10, 0.5 * SY10), id="leading plus and bare fraction"),
    pytest.param("click(start_box='(-3,500)')", Clamped(0, 500 * SY10), id="-3: clamped"),
    pytest.param("click(start_box='(1000,1000)')", Clamped(WIDTH - 1, HEIGHT - 1), id="1000, the edge itself: clamped"),
    pytest.param("click(start_box='(1020,500)')", Clamped(WIDTH - 1, 500 * SY10), id="2 % past the edge: clamped"),
    pytest.param("click(start_box='(1021,500)')", Refused(OffScreenPoint, "uitars-1.0 coordinates run 0–1000 × 0–1000"),
                 id="just beyond 2 %: refused"),
    pytest.param("click(start_box='(1268,708)')", Refused(OffScreenPoint, "point (1268, 708) is off the screen"),
                 id="screen pixels in a relative space: refused, not clamped to the corner"),
    pytest.param("click(start_box='(500,-25)')", Refused(OffScreenPoint, "point (500, -25) is off the screen"),
                 id="negative beyond the tolerance: refused"),
    pytest.param("click(start_box='(1e309,5)')", Refused(ParseError, "overflows to infinity"), id="1e309: parse error"),
    pytest.param("click(start_box='(NaN,5)')", Refused(ParseError, "'NaN' in '(NaN,5)' is not a finite coordinate"),
                 id="NaN: parse error"),
    pytest.param("click(start_box='(1,2,3)')", Refused(ParseError, "found 3 (1, 2, 3)"), id="a box of 3: parse error"),
    pytest.param("click(start_box='<|box_start|>(100,200,300,400)<|box_end|>')", On(200 * SX10, 300 * SY10),
                 id="a box: its centre"),
]


@pytest.mark.parametrize(("reply", "expected"), UITARS_10)
def test_uitars_10_hostile_replies(reply, expected):
    judge(lambda: the_action_of(reply), "uitars-1.0", expected)


# ---- OpenAI computer-use: pixels of the declared 1280×720 display (2 %: 25.6 × 14.4) --------------

def click_at(x, y) -> dict:
    return {"type": "click", "button": "left", "x": x, "y": y}


COMPUTER_USE = [
    pytest.param(click_at(1e308, 1e308), Refused(OffScreenPoint, "point (1e+308, 1e+308) is off the screen"),
                 id="1e308: refused"),
    pytest.param(click_at(150.0, 300), On(150, 300), id="float and int: on screen"),
    pytest.param(click_at("12", 300), Refused(UnusableReply, "action.click.x: Input should be a valid number"), id="a string: unusable"),
    pytest.param(click_at(None, 300), Refused(UnusableReply, "action.click.x: Input should be a valid number"), id="null: unusable"),
    pytest.param(click_at(True, 300), Refused(UnusableReply, "action.click.x: Input should be a valid number"), id="a boolean: unusable"),
    pytest.param(click_at([1, 2], 300), Refused(UnusableReply, "action.click.x: Input should be a valid number"), id="a list: unusable"),
    pytest.param(click_at(float("nan"), 300), Refused(UnusableReply, "action.click.x: Input should be a finite number"),
                 id="NaN: unusable"),
    pytest.param(click_at(10, float("-inf")), Refused(UnusableReply, "action.click.y: Input should be a finite number"),
                 id="-Infinity: unusable"),
    pytest.param(click_at(10**400, 300), Refused(UnusableReply, "action.click.x: Input should be a valid number"),
                 id="an integer beyond the float range: unusable, not OverflowError"),
    pytest.param(click_at(-3, 300), Clamped(0, 300), id="-3: clamped"),
    pytest.param(click_at(1280, 720), Clamped(WIDTH - 1, HEIGHT - 1), id="x = width, the edge itself: clamped"),
    pytest.param(click_at(1305, 300), Clamped(WIDTH - 1, 300), id="25 px past the edge: clamped"),
    pytest.param(click_at(1306, 300), Refused(OffScreenPoint, "openai-cua coordinates run 0–1280 × 0–720"),
                 id="26 px past the edge: refused"),
    pytest.param(click_at(640, -15), Refused(OffScreenPoint, "point (640, -15) is off the screen"),
                 id="negative beyond the tolerance: refused"),
    pytest.param({"type": "scroll", "x": 10, "y": 10, "scroll_x": 0, "scroll_y": float("nan")},
                 Refused(UnusableReply, "action.scroll.scroll_y: Input should be a finite number"), id="a NaN scroll distance: unusable"),
    pytest.param({"type": "drag", "path": [{"x": 10, "y": 10}, {"x": 10, "y": 5000}]},
                 Refused(OffScreenPoint, "end point (10, 5000) is off the screen"), id="a drag ending far off: refused"),
]


@pytest.mark.parametrize(("raw", "expected"), COMPUTER_USE)
def test_computer_use_hostile_actions(raw, expected):
    judge(lambda: computer_use_action(raw), "openai-cua", expected)


def computer_use_action(raw: dict) -> Action:
    """`raw` as the policy gets it: validated at the client seam (a malformed one is an invalid reply), then ours."""
    from llm import ResponsesResult

    result = ResponsesResult.from_raw({"id": "r", "output": [{"type": "computer_call", "call_id": "c", "action": raw}]},
                                      model="m", role="cua")
    if result.invalid is not None:
        raise UnusableReply(result.invalid)
    [call] = result.computer_calls()
    return parse_computer_action(call.batch[0])


# ---- the same rule in every space ------------------------------------------------------------------

@pytest.mark.parametrize("space", ["uitars-1.5", "uitars-1.0", "openai-cua", "screen"])
def test_every_space_clamps_within_two_percent_of_its_extent_and_refuses_beyond(space):
    from cua import coordinate_space

    extent_x, extent_y = coordinate_space(space).model_size(WIDTH, HEIGHT)
    middle_y = extent_y / 2

    def at(x: float) -> Action:
        return Action(kind="click", point=Point(x=x, y=middle_y))

    assert place_action(at(extent_x * 0.5), space, WIDTH, HEIGHT).notes == []
    assert len(place_action(at(extent_x * 1.019), space, WIDTH, HEIGHT).notes) == 1
    assert len(place_action(at(-extent_x * 0.019), space, WIDTH, HEIGHT).notes) == 1
    for outside in (extent_x * 1.021, -extent_x * 0.021):
        with pytest.raises(OffScreenPoint, match=f"{space} coordinates run"):
            place_action(at(outside), space, WIDTH, HEIGHT)


def test_a_point_is_always_finite():
    with pytest.raises(ValueError, match="finite"):
        Point(x=float("inf"), y=0)
    # A copy skips validation; the placement rule still refuses what it cannot place.
    sneaky = Action(kind="click", point=Point(x=1, y=1)).model_copy(
        update={"point": Point.model_construct(x=float("nan"), y=1)})
    with pytest.raises(OffScreenPoint, match="not a finite number"):
        place_action(sneaky, "screen", WIDTH, HEIGHT)


# ---- the computer-use policy: such actions are an unusable reply, over the wire ----------------------

def tiny_png() -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (4, 4), "white").save(buffer, format="PNG")
    return buffer.getvalue()


def observation() -> Observation:
    return Observation(task="Press it", step=1, max_steps=5, screenshot=tiny_png(), viewport_width=WIDTH,
                       viewport_height=HEIGHT)


def computer_call(call_id: str, actions: list[dict]) -> dict:
    return {"type": "computer_call", "id": f"cu_{call_id}", "call_id": call_id, "status": "completed",
            "pending_safety_checks": [], "actions": actions}


async def decide(tmp_path, items: list[dict]):
    with ScriptedOpenAIServer([reply_responses(items, response_id="resp_1")]) as server:
        client = ModelClient(scripted_registry(server), cache=CallCache(tmp_path / "llm-cache", enabled=False))
        policy = get_policy("openai-cua", model="scripted", client=client)
        decision = await policy.act(observation())
        await policy.close()
    return decision


@pytest.mark.parametrize(
    ("x", "reason"),
    [
        pytest.param(1e308, "point (1e+308, 1e+308) is off the screen", id="1e308"),
        pytest.param(10**400, "click.x: Input should be a valid number", id="a 401-digit integer"),
        pytest.param(float("nan"), "click.x: Input should be a finite number", id="NaN on the wire"),
        pytest.param("640", "click.x: Input should be a valid number", id="a string"),
    ],
)
async def test_computer_use_policy_turns_a_hostile_point_into_an_unusable_reply(tmp_path, x, reason):
    decision = await decide(tmp_path, [computer_call("c1", [click_at(x, 1e308 if x == 1e308 else 300)])])
    assert decision.actions == [] and reason in decision.invalid


async def test_computer_use_policy_skips_an_off_screen_action_of_a_batch_with_a_note(tmp_path):
    batch = [click_at(5000, 300), click_at(1280, 300), {"type": "wait"}]
    decision = await decide(tmp_path, [computer_call("c1", batch)])
    assert decision.invalid is None
    # The edge answer stays in the model's space: the rollout clamps it (and notes it) when it runs.
    assert decision.actions == [Action(kind="click", point=Point(x=1280, y=300)), Action(kind="wait")]
    assert any("skipped an unusable action: point (5000, 300) is off the screen" in note for note in decision.notes)
    assert json.loads(decision.raw_text)[0]["call_id"] == "c1"
