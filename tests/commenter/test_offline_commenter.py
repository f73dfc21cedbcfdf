"""The offline commenter measures a real page in Chromium and the trajectory; no model involved."""

from __future__ import annotations

import pytest

from cua import Action, Point, Trajectory
from commenter import PRINCIPLES, collect_facts, comment_app, get_commenter, validate_comment
from commenter._feedback import principle_of, selectors_in

from tests.trajectories import TEST_PAGE, driven_trajectory

# TEST_PAGE plus a 14×14 button that shows a toast which hides itself after 2 s.
PLANTED = TEST_PAGE.replace(
    '<button id="noop">Does nothing</button>',
    '<button id="noop">Does nothing</button>'
    '<button id="tiny" style="width:14px;height:14px;padding:0" onclick="toast()">x</button>'
    '<div class="toast" id="toast"></div>'
    '<script>function toast() { const t = document.getElementById("toast"); t.textContent = "Saved!";'
    " setTimeout(() => { t.textContent = ''; }, 2000); }</script>",
)
TASK = "Increment the counter, set the level and save."


@pytest.fixture(scope="module")
async def planted(tmp_path_factory):
    """A trajectory on the planted page: a working click, a no-effect click, the tiny toast button."""
    folder = tmp_path_factory.mktemp("planted")
    actions = [
        Action(kind="click", point=Point(x=75, y=140)),  # #inc: works
        Action(kind="click", point=Point(x=200, y=140)),  # #noop: nothing happens
        Action(kind="click", point=Point(x=307, y=137)),  # #tiny: a toast for 2 s
    ]
    trajectory = await driven_trajectory(folder, actions, html=PLANTED, task=TASK)
    facts = await collect_facts(PLANTED, trajectory)
    return folder, trajectory, facts


async def test_offline_facts_find_the_planted_problems(planted):
    _, trajectory, facts = planted
    assert [s.dom_changed for s in trajectory.steps] == [True, False, True]
    assert [f.selector for f in facts.task_controls_off_viewport] == ["#save"]  # the task says "save"
    assert "#save" in [f.selector for f in facts.off_viewport_controls]
    assert [f.selector for f in facts.small_targets] == ["#tiny"]
    assert facts.small_targets[0].detail == "14×14 px"
    assert [f.selector for f in facts.slider_only_inputs] == ["#level"]
    assert [(s.step, s.selector) for s in facts.no_effect_steps] == [(2, "#noop")]
    assert [(f.selector, f.text) for f in facts.transient_status] == [("#toast", "Saved!")]
    assert facts.page_height > 720 and facts.measured_page and not facts.notes


async def test_offline_comment_names_each_element_and_its_principle(planted):
    folder, _, _ = planted
    result = await get_commenter("offline").comment(folder, html=PLANTED)
    assert result.offline and result.commenter == "offline" and result.facts is not None
    comment = result.comment
    validate_comment(comment.model_dump())
    assert 3 <= len(comment.actionable_changes) <= 6 and len(comment.issues) <= 3
    named = {selector for change in comment.actionable_changes for selector in selectors_in(change)}
    assert {"#save", "#noop", "#level", "#tiny"} <= named
    by_selector = {selectors_in(c)[0]: principle_of(c) for c in comment.actionable_changes}
    assert by_selector["#save"] == "interaction robustness"
    assert by_selector["#noop"] == "state visibility"
    assert by_selector["#level"] == "input permissiveness"
    assert all(principle_of(c) in PRINCIPLES for c in comment.actionable_changes)
    assert comment.fit_within_screen is True


async def test_slider_with_a_number_input_and_a_big_button_are_not_flagged():
    html = """<!doctype html><body style="margin:0">
      <div><input id="vol" type="range"><input id="volNumber" type="number"></div>
      <button id="go" style="width:120px;height:48px">Go</button>
      <label style="display:inline-block;padding:12px"><input id="agree" type="checkbox"> I agree to the terms</label>
    </body>"""
    facts = await collect_facts(html, None, task="Set the volume and go", use_axe=False)
    assert facts.slider_only_inputs == []
    assert facts.small_targets == []  # the checkbox's label is the target
    assert facts.off_viewport_controls == [] and not facts.overflows_viewport


async def test_animations_missing_ids_and_axe_findings_are_measured():
    html = """<!doctype html><head><style>
      @keyframes pulse { from { opacity: 1 } to { opacity: .5 } }
      .pulse { animation: pulse 1s infinite; } .fade { transition: opacity .3s; }
      .pale { color: #bbb; background: #fff; }</style></head><body>
      <button class="pulse">Start</button><button class="fade" id="icon"></button>
      <p class="pale">faint text that is hard to read</p></body>"""
    facts = await collect_facts(html, None, task="Start")
    assert facts.animations and facts.animations[0].infinite and "pulse" in facts.animations[0].selector
    assert any("fade" in t.selector or t.selector == "#icon" for t in facts.transitions)
    assert [f.selector for f in facts.missing_ids] == ["button.pulse"]
    assert any(f.selector == "#icon" for f in facts.unnamed_controls)  # an empty button has no name
    # The pulsing button's contrast depends on the animation's phase when axe looks (opacity 1 → .5),
    # so it may or may not be flagged; the planted pale text must be, and nothing else.
    found = [(f.tag, f.text) for f in facts.low_contrast]
    assert ("p", "faint text that is hard to read") in found
    assert set(found) <= {("p", "faint text that is hard to read"), ("button", "Start")}
    pale = next(f for f in facts.low_contrast if f.tag == "p")  # the button, when flagged, may come first
    assert pale.detail.startswith("contrast 1.")


async def test_offline_comment_without_html_uses_the_trajectory_alone(planted):
    folder, _, _ = planted
    result = await get_commenter("offline").comment(folder)
    assert result.facts.measured_page is False and result.facts.notes
    assert any("#noop" in change for change in result.comment.actionable_changes)


async def test_offline_feedback_for_an_app_merges_its_failed_tasks(planted):
    folder, _, _ = planted
    feedback = await comment_app("test-page", [folder, folder], get_commenter("offline", replay=False), html=PLANTED)
    assert feedback.offline and len(feedback.sources) == 2 and len(feedback.facts) == 2
    assert len(feedback.actionable_changes) == len(set(feedback.actionable_changes)) <= 10
    assert Trajectory.load(folder).success is False


async def test_a_version_is_measured_at_load_once_and_every_trajectory_gets_the_same_facts(planted):
    """The load-state measurement and axe-core run once per app version; the facts do not change by it."""
    from commenter import _facts

    _, trajectory, first = planted
    key = _facts._load_state_key(PLANTED, None, trajectory.viewport, True)
    assert key in _facts._LOAD_STATES  # the fixture measured it
    again = await collect_facts(PLANTED, trajectory)  # from the kept measurement: one page (the replay's)
    assert again.model_dump() == first.model_dump()
    again.small_targets[0].detail = "changed"  # each trajectory's facts are its own copy
    assert (await collect_facts(PLANTED, trajectory, replay=False)).small_targets[0].detail == "14×14 px"
    _facts._LOAD_STATES.clear()
    fresh = await collect_facts(PLANTED, trajectory)
    assert fresh.model_dump() == first.model_dump()
