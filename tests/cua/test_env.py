"""`AppEnv`: the browser environment of one episode, driven from outside one action at a time."""

import io
import re
import time

import pytest
from PIL import Image

from cua import (
    Action,
    AppEnv,
    BrowserConfig,
    CheckResult,
    OffScreenPoint,
    Point,
    RolloutConfig,
    Step,
    Viewport,
    action_from_screen,
    capture_png,
    isolated_world,
    smart_resize,
)
from cua._env import OBSERVE_RESERVE_MS
from cua._executor import WAIT_CAP_MS
from tests.cua.cua_lab import INC_BUTTON, LAB, NAME_INPUT, count_checker

FAST = RolloutConfig(max_steps=8, step_timeout_s=20, episode_timeout_s=60)


def click(x: float, y: float) -> Action:
    return Action(kind="click", point=Point(x=x, y=y))


def png_size(png: bytes) -> tuple[int, int]:
    with Image.open(io.BytesIO(png)) as image:
        return image.size


async def count(env: AppEnv) -> int:
    return int(await isolated_world(env.page).evaluate("Number(document.querySelector('#count').textContent)"))


async def test_reset_gives_a_first_observation_of_the_configured_viewport():
    async with AppEnv(FAST) as env:
        observation = await env.reset(LAB, "Add three", count_checker)
        assert png_size(observation.screenshot) == (1280, 720)
        assert (observation.viewport_width, observation.viewport_height) == (1280, 720)
        assert (observation.task, observation.step, observation.max_steps) == ("Add three", 1, 8)
        assert env.viewport == Viewport(width=1280, height=720)
        assert env.events is not None and env.events.page_errors == []
    # leaving the `async with` released the page: closed, or reset to a blank warm page for the next app
    assert env.page.is_closed() or env.page.url == "about:blank"


async def test_a_click_by_coordinates_changes_the_dom_and_the_step_record_says_so():
    async with AppEnv(FAST) as env:
        before = await env.reset(LAB, "Add three", count_checker)
        result = await env.step(click(*INC_BUTTON))
        observation, check, done = result
        assert len(tuple(result)) == 3
        assert await count(env) == 1
        step = result.step
        assert step.index == 1 and step.target.id == "inc"
        assert step.dom_changed is True and step.screen_changed is True and step.error is None
        assert step.model_action == step.screen_action == click(*INC_BUTTON)
        assert step.timings.execute_ms > 0 and step.timings.total_ms >= step.timings.execute_ms
        assert observation.step == 2 and observation.screenshot != before.screenshot
        assert check == CheckResult(passed=False) and not done and not step.checker_passed


async def test_a_click_on_nothing_is_recorded_as_changing_nothing():
    async with AppEnv(FAST) as env:
        await env.reset(LAB, "Add three", count_checker)
        result = await env.step(click(640, 700))
        assert result.step.dom_changed is False and result.step.screen_changed is False
        assert not result.done


async def test_done_when_the_checker_turns_true():
    async with AppEnv(FAST) as env:
        await env.reset(LAB, "Add three", count_checker)
        verdicts = [(await env.step(click(*INC_BUTTON))) for _ in range(3)]
        assert [r.done for r in verdicts] == [False, False, True]
        assert verdicts[-1].check.passed and verdicts[-1].step.checker_passed


async def test_with_stop_on_checker_off_a_passing_checker_is_reported_but_only_finished_is_done():
    async with AppEnv(FAST.model_copy(update={"stop_on_checker": False})) as env:
        await env.reset(LAB, "Add three, then say how many", count_checker)
        verdicts = [(await env.step(click(*INC_BUTTON))) for _ in range(4)]
        assert [r.done for r in verdicts] == [False] * 4
        assert [r.check.passed for r in verdicts] == [False, False, True, True]
        assert [r.step.checker_passed for r in verdicts] == [False, False, True, True]
        answered = await env.step(Action(kind="finished", text="4"))
        assert answered.done and answered.check.passed and answered.step.checker_passed


async def test_finished_is_done_and_judges_the_page_without_input():
    async with AppEnv(FAST) as env:
        first = await env.reset(LAB, "Add three", count_checker)
        observation, check, done = await env.step(Action(kind="finished", text="all set"))
        assert done and not check.passed
        assert observation.screenshot == first.screenshot
        assert await count(env) == 0


async def test_without_a_checker_the_verdict_says_so():
    async with AppEnv(FAST) as env:
        await env.reset(LAB, "Add three")
        _, check, done = await env.step(click(*NAME_INPUT))
        assert check == CheckResult(passed=False, reason="no checker") and not done


async def test_a_uitars_15_point_lands_where_the_screen_point_does_after_smart_resize():
    assert smart_resize(1280, 720) == (1288, 728)
    model_action = action_from_screen(click(*INC_BUTTON), "uitars-1.5", 1280, 720)
    assert model_action.point.x == pytest.approx(INC_BUTTON[0] * 1288 / 1280, abs=0.01)
    async with AppEnv(FAST) as env:
        await env.reset(LAB, "Add three", count_checker)
        in_screen = (await env.step(click(*INC_BUTTON))).step
        await env.reset(LAB, "Add three", count_checker)  # a fresh context: the count starts again
        in_model = (await env.step(model_action, space="uitars-1.5")).step
        assert await count(env) == 1
    assert in_model.model_action == model_action
    assert in_model.screen_action.point.x == pytest.approx(in_screen.screen_action.point.x, abs=0.01)
    assert in_model.screen_action.point.y == pytest.approx(in_screen.screen_action.point.y, abs=0.01)
    assert in_model.target == in_screen.target and in_model.target.id == "inc"


async def test_a_1024x768_viewport_gives_1024x768_screenshots():
    config = RolloutConfig(browser=BrowserConfig(viewport=Viewport(width=1024, height=768)))
    env = AppEnv(config)
    try:
        observation = await env.reset(LAB, "Add three", count_checker)
        assert png_size(observation.screenshot) == (1024, 768)
        observation, _, _ = await env.step(click(*INC_BUTTON))
        assert png_size(observation.screenshot) == (1024, 768)
        assert (observation.viewport_width, observation.viewport_height) == (1024, 768)
    finally:
        await env.close()
    assert env.page.is_closed() or env.page.url == "about:blank"


async def test_step_before_reset_says_what_to_do():
    with pytest.raises(RuntimeError, match="reset"):
        await AppEnv(FAST).step(click(1, 1))


async def test_a_point_far_off_the_screen_is_refused_before_anything_runs():
    async with AppEnv(FAST) as env:
        first = await env.reset(LAB, "Add one", count_checker)
        record = Step(index=0, notes=["the model's reply"])
        far = click(-5000, 60 * 728 / 720)  # once clamped silently to the left edge
        with pytest.raises(OffScreenPoint, match=r"point \(-5000, 60.6667\) is off the screen"):
            await env.step(far, "uitars-1.5", record=record)
        assert env.steps_taken == 0 and env.screenshot == first.screenshot
        assert record == Step(index=0, notes=["the model's reply"])  # untouched
        # Just past the right edge (x = 1288 of the 1288-wide image): clamped onto the screen, with a note.
        result = await env.step(click(1288, 60 * 728 / 720), "uitars-1.5", record=record)
        assert result.step is record and record.index == 1 and await count(env) == 0
        assert record.screen_action.point == Point(x=1279, y=60)
        assert record.notes[0] == "the model's reply" and "clamped to screen pixel (1279, 60)" in record.notes[1]


# ---- wait(): "Sleep for 5s and take a screenshot to check for any changes" (the UI-TARS prompt) ----
#
# Timed by the page's own clock and by the order of its timers, not by the test's wall clock: the
# harness's wait reports how long it watched by `performance.now()` ("wait: the page changed after N ms"
# / "wait: no change in N ms"), and the page records when it scheduled its change and when that fired.
# The wait's cap is a timer in the same renderer as the page's change, so whichever is due first fires
# first however loaded the machine is; only the short gap between scheduling the change (the
# `page.evaluate` just before the step) and the start of the wait (one round trip to the page later)
# is the machine's, and each test leaves that gap well over a second.

DELAYED = """<!doctype html><body style="margin:0"><p id="status">Loading…</p>
<script>window.later = ms => {
  window.scheduledAt = performance.now();
  setTimeout(() => { window.firedAt = performance.now(); document.getElementById('status').textContent = 'Ready'; }, ms);
};</script></body>"""
WAITED = re.compile(r"wait: (?:(?P<changed>the page changed after)|no change in) (?P<ms>\d+) ms")
CUT = re.compile(r"wait: cut to (?P<ms>\d+) ms by the time left of the step")


async def ready(page) -> bool:
    return bool(await isolated_world(page).evaluate("document.querySelector('#status').textContent === 'Ready'"))


def waited(step: Step) -> tuple[bool, int]:
    """What the step's wait saw: (whether it ended at a change, how long it watched by the page's clock)."""
    found = [match for note in step.notes if (match := WAITED.fullmatch(note))]
    assert len(found) == 1, step.notes
    return found[0]["changed"] is not None, int(found[0]["ms"])


async def page_times(env: AppEnv) -> dict:
    """When the page scheduled its change and when that fired (`performance.now()`), once it has fired."""
    await env.page.wait_for_function("window.firedAt !== undefined", timeout=30_000)
    return await env.page.evaluate("({scheduled: window.scheduledAt, fired: window.firedAt})")


async def test_wait_observes_a_change_more_than_2_s_in_and_ends_there():
    async with AppEnv(FAST) as env:
        await env.reset(DELAYED, "Wait until ready", ready)
        # The change is due 4 s from now, before the wait's 5 s cap (due 5 s from the wait's start, which is later).
        await env.page.evaluate("later(4000)")
        result = await env.step(Action(kind="wait"))
        assert result.observation.screenshot == await capture_png(env.page)
        times = await page_times(env)
    changed, watched_ms = waited(result.step)
    # Ended at the change, not at its cap: the wait says it saw a change, and the observation after it shows it.
    assert changed and result.check.passed and result.done, result.step.notes
    # It had watched the page past the old 2 s cap when the change came (a 2 s wait would have ended with no
    # change): by the page's clock, so a slow machine cannot make a short wait look long.
    assert watched_ms > 2_000, (f"the wait started {times['fired'] - watched_ms - times['scheduled']:.0f} ms after "
                                f"the change was scheduled", result.step.notes)


async def test_wait_on_a_still_page_watches_it_for_5_s():
    async with AppEnv(FAST) as env:
        await env.reset(DELAYED, "Wait until ready", ready)
        # A change 7 s from now: after the wait's cap (due 5 s from its start), but one a wait that watched past
        # its cap would see. It does come (page_times waits for it), so "no change" means the wait had ended.
        await env.page.evaluate("later(7000)")
        result = await env.step(Action(kind="wait"))
        times = await page_times(env)
    changed, watched_ms = waited(result.step)
    assert not changed, (result.step.notes, times)  # ended at its cap, before the change at 7 s
    # Watched the whole 5 s by the page's clock (a timer never fires early; 10 ms for the clock's coarsening).
    assert watched_ms >= 5_000 - 10, result.step.notes
    assert times["fired"] - times["scheduled"] >= 7_000


async def test_a_wait_is_cut_to_the_time_left_of_the_step():
    async with AppEnv(FAST) as env:
        await env.reset(DELAYED, "Wait until ready", ready)
        # The step's deadline is 3 s away, and the page changes then: a whole 5 s wait would see that change;
        # one cut to what is left of the step, less a settle and the observation, has ended before it.
        await env.page.evaluate("later(3000)")
        result = await env.step(Action(kind="wait"), deadline=time.monotonic() + 3.0)
        await page_times(env)
    cut = [int(match["ms"]) for note in result.step.notes if (match := CUT.fullmatch(note))]
    assert len(cut) == 1, result.step.notes
    # Computed from the deadline, so it only shrinks as time passes: a bound a loaded machine cannot break.
    assert cut[0] <= 3_000 - OBSERVE_RESERVE_MS - FAST.settle_cap_ms, result.step.notes
    changed, watched_ms = waited(result.step)
    assert not changed, result.step.notes  # ended at its cut cap, before the change at the deadline
    assert watched_ms >= cut[0] - 10, result.step.notes  # and watched for all of it


def test_the_default_step_limit_leaves_room_for_a_model_call_a_wait_a_settle_and_the_observation():
    config = RolloutConfig()
    assert WAIT_CAP_MS == 5_000
    needed_ms = (config.model_timeout_s * 1000 + WAIT_CAP_MS + config.settle_motion_cap_ms + OBSERVE_RESERVE_MS
                 + config.checker_timeout_s * 1000)
    assert config.step_timeout_s * 1000 >= needed_ms
