"""The offline detector's rules on measured facts, and the commenter's findings mapped to tuples (no browser)."""

from __future__ import annotations

import pytest

from commenter import Comment, ElementFact, NoEffectStep, OfflineFacts, TaskComment
from commenter.detector import judge, map_comment
from cua import Action, ElementInfo, Point, TransitionTuple


def _target(**overrides) -> dict:
    base = {"selector": "#go", "tag": "button", "id": "go", "type": None, "cls": "btn", "text": "Go", "label": "",
            "value": None, "selected_text": None, "box": {"x": 100, "y": 50, "width": 80, "height": 30}, "opacity": 1.0,
            "filter": "none", "cursor": "pointer", "disabled": False, "background": "rgb(0, 90, 200)",
            "color": "rgb(255, 255, 255)", "font_size": 14, "margins": [0, 8, 0, 0], "clipped": False, "active": False,
            "drawn": True}
    return {**base, **overrides}


def _peer(index: int, **overrides) -> dict:
    return _target(selector=f"#p{index}", id=f"p{index}", box={"x": 100 + 90 * index, "y": 50, "width": 80, "height": 30},
                   **overrides)


def _tuple(kind="click", dom_changed=True, text=None, keys=()) -> TransitionTuple:
    action = Action(kind=kind, point=Point(x=140, y=65) if kind in ("click", "left_double") else None, text=text,
                    keys=list(keys))
    return TransitionTuple(app_id="a", task_id="t", step=1, before="b.png", after="c.png", action=action,
                           action_text=action.describe(), element=ElementInfo(tag="button", id="go", selector="#go"),
                           dom_changed=dom_changed, defect="none", viewport_width=1280, viewport_height=720)


PEERS = [_peer(1), _peer(2), _peer(3)]


def test_nothing_fires_on_a_plain_row_of_alike_buttons():
    assert judge(_tuple(), {"target": _target(), "peers": PEERS}, {"target": _target()}, None)[0] is None


@pytest.mark.parametrize("kind, dom_changed, before, after, expected", [
    ("click", False, _target(), _target(), "no-response"),
    ("type", True, _target(tag="input", value="1"), _target(tag="input", value="1"), "input-keyboard"),
    ("type", True, _target(tag="input", value=""), _target(tag="input", value="25"), "input-keyboard"),  # typed 2.5
    ("type", True, _target(tag="input", value=""), _target(tag="input", value="3.5"), "unexpected-result"),
])
def test_interaction_rules(kind, dom_changed, before, after, expected):
    item = _tuple(kind, dom_changed, text="2.5" if kind == "type" else None)
    found, evidence = judge(item, {"target": before, "peers": []}, {"target": after}, None)
    assert found == expected and evidence


def test_a_drop_down_showing_another_option_than_the_one_clicked_is_an_unexpected_result():
    before = {"target": _target(tag="select", value="mi"), "option": {"value": "mi", "text": "Miles"}, "peers": []}
    after = {"target": _target(tag="select", value="yd", selected_text="Yards")}
    assert judge(_tuple(), before, after, None)[0] == "unexpected-result"


def test_another_control_of_the_kind_becoming_selected_is_a_navigation_error():
    before = {"target": _target(), "peers": PEERS}
    after = {"target": _target(active=False), "peers": [_peer(1, active=True), _peer(2), _peer(3)]}
    assert judge(_tuple(), before, after, None)[0] == "navigation-error"


@pytest.mark.parametrize("target, extra, expected", [
    (_target(opacity=0.0, drawn=False), {}, "element-missing"),
    (_target(opacity=0.35, filter="grayscale(1)"), {}, "abnormal-state"),
    (_target(), {"overlapping": [{"selector": "div.badge", "text": "New!", "box": {}}]}, "elements-overlapping"),
    (_target(), {"texts": [{"selector": "#total", "text": "Total: NaN"}]}, "data-format-error"),
    (_target(text="Go 5.00000001"), {}, "data-format-error"),
    (_target(background="rgb(228, 0, 124)"), {}, "inconsistent-colour"),
    (_target(box={"x": 100, "y": 50, "width": 110, "height": 48}), {}, "inconsistent-size"),
    (_target(margins=[22, 8, 0, 30]), {}, "uneven-spacing"),
    (_target(box={"x": 112, "y": 58, "width": 80, "height": 30}), {}, "misalignment"),
])
def test_display_rules(target, extra, expected):
    found, evidence = judge(_tuple(), {"target": target, "peers": PEERS, **extra}, {"target": target}, None)
    assert found == expected and "#go" in evidence


def test_an_overlap_the_defect_free_version_also_has_is_by_design():
    face = {"selector": "#card-1 > .back", "text": "", "box": {}}
    badge = {"selector": "div.badge", "text": "New!", "box": {}}
    here = {"target": _target(), "peers": PEERS, "overlapping": [face]}
    assert judge(_tuple(), here, {"target": _target()}, {"target": _target(), "overlapping": [face]})[0] is None
    here["overlapping"].append(badge)  # a new one beside it still is a defect
    found, evidence = judge(_tuple(), here, {"target": _target()}, {"target": _target(), "overlapping": [face]})
    assert found == "elements-overlapping" and "div.badge" in evidence
    assert judge(_tuple(), {**here, "overlapping": [face]}, {"target": _target()}, None)[0] == "elements-overlapping"


def test_a_disabled_control_that_looks_disabled_is_not_abnormal():
    target = _target(opacity=0.4, disabled=True)
    assert judge(_tuple(), {"target": target, "peers": []}, {"target": target}, None)[0] is None


def test_the_defect_free_version_shows_missing_elements_and_changed_words():
    here = {"target": _target(text="Lorem ipsum"), "peers": [],
            "elements": [{"selector": "#go", "text": "Lorem ipsum", "drawn": True}]}
    reference = {"target": _target(), "elements": [{"selector": "#go", "text": "Go", "drawn": True}]}
    assert judge(_tuple(), here, {"target": here["target"]}, reference)[0] == "content-error"
    # an element the app removed here (the two versions' states parted) is not a missing one…
    reference["elements"].append({"selector": "label[for=go]", "text": "Start", "drawn": True})
    assert judge(_tuple(), here, {"target": here["target"]}, reference)[0] == "content-error"
    # …one that is here but not drawn is
    here["elements"].append({"selector": "label[for=go]", "text": "Start", "drawn": False})
    assert judge(_tuple(), here, {"target": here["target"]}, reference)[0] == "element-missing"


def test_a_control_in_another_state_than_its_kind_may_look_different():
    lit = _target(background="rgb(39, 245, 200)", active=True)  # a lit step among dark ones: on purpose
    assert judge(_tuple(), {"target": lit, "peers": PEERS}, {"target": lit}, None)[0] is None
    unlit = _target(background="rgb(39, 245, 200)")
    assert judge(_tuple(), {"target": unlit, "peers": PEERS}, {"target": unlit}, None)[0] == "inconsistent-colour"


def test_the_offline_commenters_facts_map_to_the_tuples_they_name():
    facts = OfflineFacts(measured_page=True, no_effect_steps=[NoEffectStep(step=2, action="click(1,1)", selector="#x")],
                         small_targets=[ElementFact(selector="#go", id="go", detail="16×16 px")])
    comment = TaskComment(app_id="a", task_id="t", commenter="offline", offline=True, facts=facts,
                          comment=Comment(issues=["x"], actionable_changes=["a `#go` — state visibility"] * 3,
                                          fit_within_screen=False, avoid_regressions=True))
    first = _tuple()
    second = first.model_copy(update={"step": 2, "element": ElementInfo(tag="div", selector="#x")})
    third = first.model_copy(update={"step": 3, "element": ElementInfo(tag="p", selector="p.note")})
    found = map_comment(comment, [first, second, third], trajectory_id="t")
    assert [(d.defect, d.type) for d in found] == [(True, "inconsistent-size"), (True, "no-response"), (False, None)]
    assert all(d.offline and d.detector == "commenter" for d in found)


def test_a_model_comment_names_elements_without_a_type_and_a_missing_comment_is_an_error():
    comment = TaskComment(app_id="a", task_id="t", commenter="model", comment=Comment(
        issues=["`#go` did nothing"], actionable_changes=["Make `#go` respond — state visibility"] * 3,
        fit_within_screen=False, avoid_regressions=True))
    other = _tuple().model_copy(update={"step": 2, "element": ElementInfo(tag="a", id="home", selector="#home")})
    assert [(d.defect, d.type) for d in map_comment(comment, [_tuple(), other], trajectory_id="t")] == [
        (True, None), (False, None)]
    failed = TaskComment(app_id="a", task_id="t", commenter="model", error="model call failed")
    [detection] = map_comment(failed, [_tuple()], trajectory_id="t")
    assert detection.defect is None and detection.error == "model call failed"
