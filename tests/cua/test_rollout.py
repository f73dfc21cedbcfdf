"""The rollout loop: termination reasons, limits, and what ends up on disk."""

import asyncio
import json
import time

import pytest

from cua import Action, Observation, Point, Policy, PolicyDecision, RolloutConfig, RolloutJob, TerminationReason, Trajectory, rollout, run_rollouts
from cua.policies import get_policy
from tests.cua.cua_lab import COUNT_AT_LEAST_3, INC_BUTTON, LAB, count_checker

FAST = RolloutConfig(max_steps=8, step_timeout_s=20, model_timeout_s=10, episode_timeout_s=60)


def click(xy) -> Action:
    return Action(kind="click", point=Point(x=xy[0], y=xy[1]))


def scripted(*items, repeat=False, space="screen"):
    return get_policy("scripted", script=list(items), repeat=repeat, coordinate_space=space)


async def never(page) -> bool:
    return False


TOGGLE = """<!doctype html><body style="margin:0">
<button id="t" style="position:absolute;left:20px;top:20px;width:100px;height:40px">off</button>
<script>document.getElementById('t').onclick = e => { e.target.textContent = e.target.textContent === 'off' ? 'on' : 'off'; };</script>
</body>"""

HANGS_ON_CLICK = """<!doctype html><body style="margin:0">
<button id="h" style="position:absolute;left:20px;top:20px;width:100px;height:40px"
 onclick="while (true) {}">freeze</button></body>"""


async def test_success_when_the_checker_turns_true(tmp_path):
    trajectory = await rollout(LAB, "Add three", scripted(click(INC_BUTTON), repeat=True), count_checker, tmp_path, FAST,
                               app_id="lab", task_id="add-3", expected_outcome="count is 3")
    assert trajectory.termination == TerminationReason.success and trajectory.success
    assert len(trajectory.steps) == 3
    assert [s.checker_passed for s in trajectory.steps] == [False, False, True]
    assert (trajectory.app_id, trajectory.task_id, trajectory.expected_outcome) == ("lab", "add-3", "count is 3")


async def test_trajectory_on_disk_matches_and_names_existing_screenshots(tmp_path):
    returned = await rollout(LAB, "Add three", scripted(click(INC_BUTTON), repeat=True), count_checker, tmp_path, FAST)
    loaded = Trajectory.load(tmp_path)
    assert loaded == returned
    names = [loaded.initial_screenshot] + [s.screenshot for s in loaded.steps]
    assert names == ["step_000.png", "step_001.png", "step_002.png", "step_003.png"]
    for name in names:
        assert (tmp_path / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    step = loaded.steps[0]
    assert step.target.id == "inc" and step.dom_changed and step.screen_changed
    assert step.screen_action == click(INC_BUTTON) and step.timings.total_ms > 0
    assert not list(tmp_path.glob(".*.tmp"))  # atomic writes left no temp files


async def test_model_space_actions_are_converted_before_execution(tmp_path):
    # (100, 60) on screen is (100·1288/1280, 60·728/720) in UI-TARS-1.5's smart-resized image.
    model_point = Action(kind="click", point=Point(x=100 * 1288 / 1280, y=60 * 728 / 720))
    trajectory = await rollout(LAB, "Add three", scripted(model_point, repeat=True, space="uitars-1.5"), count_checker, tmp_path, FAST)
    assert trajectory.success
    assert trajectory.coordinate_space == "uitars-1.5"
    assert trajectory.steps[0].model_action.point.x == pytest.approx(100.625)
    assert trajectory.steps[0].screen_action.point.x == pytest.approx(100, abs=0.01)


async def test_finished_when_the_agent_stops_but_the_checker_is_false(tmp_path):
    trajectory = await rollout(LAB, "Add three", scripted(click(INC_BUTTON), Action(kind="finished", text="done")),
                               count_checker, tmp_path, FAST)
    assert trajectory.termination == TerminationReason.finished and not trajectory.success
    assert [s.model_action.kind for s in trajectory.steps] == ["click", "finished"]


async def test_with_stop_on_checker_off_the_episode_goes_on_to_the_agents_answer(tmp_path):
    config = FAST.model_copy(update={"stop_on_checker": False})
    policy = scripted(*[click(INC_BUTTON)] * 4, Action(kind="finished", text="4"))
    trajectory = await rollout(LAB, "Add at least three, then say how many there are", policy, count_checker, tmp_path, config)
    assert [s.model_action.kind for s in trajectory.steps] == ["click"] * 4 + ["finished"]
    assert [s.checker_passed for s in trajectory.steps] == [False, False, True, True, True]
    assert trajectory.termination == TerminationReason.success  # finished with the checker true, as always
    assert trajectory.success and trajectory.checker_ever_passed and trajectory.answer == "4"
    saved = Trajectory.load(tmp_path)
    assert saved.stop_on_checker is False and saved.checker_ever_passed and saved.answer == "4"


async def test_with_stop_on_checker_off_a_pass_that_is_undone_still_counts_as_success(tmp_path):
    async def is_on(page) -> bool:
        return await page.locator("#t").text_content() == "on"

    config = FAST.model_copy(update={"stop_on_checker": False, "max_steps": 2})
    trajectory = await rollout(TOGGLE, "Turn it on", scripted(click((70, 40)), repeat=True), is_on, tmp_path, config)
    assert trajectory.termination == TerminationReason.max_steps  # the pass did not end the episode
    assert [s.checker_passed for s in trajectory.steps] == [True, False]
    assert trajectory.success and trajectory.checker_ever_passed and trajectory.answer is None


async def test_with_stop_on_checker_off_a_checker_that_never_passes_is_a_failure(tmp_path):
    config = FAST.model_copy(update={"stop_on_checker": False})
    policy = scripted(click(INC_BUTTON), Action(kind="finished", text="1"))
    trajectory = await rollout(LAB, "Add one and say how many", policy, count_checker, tmp_path, config)
    assert trajectory.termination == TerminationReason.finished
    assert not trajectory.success and not trajectory.checker_ever_passed and trajectory.answer == "1"


async def test_by_default_the_checker_passing_ends_the_episode_and_is_recorded_so(tmp_path):
    trajectory = await rollout(LAB, "Add three", scripted(click(INC_BUTTON), repeat=True), count_checker, tmp_path, FAST)
    assert trajectory.stop_on_checker is True and trajectory.checker_ever_passed and len(trajectory.steps) == 3


async def test_max_steps_when_each_step_makes_progress_but_never_succeeds(tmp_path):
    config = FAST.model_copy(update={"max_steps": 5})
    trajectory = await rollout(LAB, "Add many", scripted(click(INC_BUTTON), repeat=True), never, tmp_path, config)
    assert trajectory.termination == TerminationReason.max_steps
    assert len(trajectory.steps) == 5  # the same click five times is progress (new state each time), not stuck


async def test_stuck_when_clicks_change_nothing(tmp_path):
    trajectory = await rollout(LAB, "Add three", scripted(click((640, 700)), repeat=True), count_checker, tmp_path, FAST)
    assert trajectory.termination == TerminationReason.stuck
    assert len(trajectory.steps) == 3 and "did not change" in trajectory.error
    assert all(s.dom_changed is False and s.screen_changed is False for s in trajectory.steps)


async def test_stuck_when_the_same_action_only_flips_between_states(tmp_path):
    trajectory = await rollout(TOGGLE, "Turn it on for good", scripted(click((70, 40)), repeat=True), never, tmp_path, FAST)
    assert trajectory.termination == TerminationReason.stuck
    assert len(trajectory.steps) == 4 and "repeated" in trajectory.error
    assert all(s.dom_changed for s in trajectory.steps)


async def test_invalid_after_a_bounded_number_of_unparseable_replies(tmp_path):
    policy = scripted("I would click the button", "Action: fly()", "Thought: hmm", click(INC_BUTTON), repeat=True)
    config = FAST.model_copy(update={"max_invalid_replies": 3})
    trajectory = await rollout(LAB, "Add three", policy, count_checker, tmp_path, config)
    assert trajectory.termination == TerminationReason.invalid
    assert policy.position == 3  # asked exactly three times, never a fourth
    assert len(trajectory.steps) == 1
    assert trajectory.steps[0].invalid_replies == ["I would click the button", "Action: fly()", "Thought: hmm"]
    assert trajectory.steps[0].error.startswith("invalid reply")
    assert "could not be used" in (policy.observations[-1].feedback or "")


async def test_an_unparseable_reply_is_re_asked_and_recorded_on_the_step_that_follows(tmp_path):
    policy = scripted("no action here", click(INC_BUTTON), click(INC_BUTTON), click(INC_BUTTON))
    trajectory = await rollout(LAB, "Add three", policy, count_checker, tmp_path, FAST)
    assert trajectory.success
    assert trajectory.steps[0].invalid_replies == ["no action here"]
    assert trajectory.steps[1].invalid_replies == []


async def test_a_hung_page_ends_in_timeout_with_the_partial_trajectory_saved(tmp_path):
    config = FAST.model_copy(update={"step_timeout_s": 2.0})
    started = time.monotonic()
    trajectory = await rollout(HANGS_ON_CLICK, "Freeze it", scripted(click((70, 40)), repeat=True), never, tmp_path, config)
    assert trajectory.termination == TerminationReason.timeout
    # The 2 s step limit ended it, not the 60 s episode limit (the other limit that could have): the error says
    # which; and the rollout returned, hung page closed, before the episode limit was even reached (the close
    # is bounded at 10 s). Bounds that are the product's own limits, not a guess at the machine's speed.
    assert "step 1 exceeded" in trajectory.error
    assert time.monotonic() - started < config.episode_timeout_s
    saved = Trajectory.load(tmp_path)
    assert saved.termination == TerminationReason.timeout
    assert len(saved.steps) == 1 and saved.steps[0].model_action == click((70, 40)) and saved.steps[0].error


class _SlowPolicy(Policy):
    name = "slow"

    def __init__(self, seconds: float):
        self.seconds = seconds

    @property
    def coordinate_space(self) -> str:
        return "screen"

    async def act(self, observation: Observation) -> PolicyDecision:
        await asyncio.sleep(self.seconds)  # stands in for a model that does not answer
        return PolicyDecision(actions=[click(INC_BUTTON)])


async def test_model_call_limit_ends_in_timeout(tmp_path):
    config = FAST.model_copy(update={"model_timeout_s": 0.3})
    trajectory = await rollout(LAB, "Add three", _SlowPolicy(30), count_checker, tmp_path, config)
    assert trajectory.termination == TerminationReason.timeout and "did not answer" in trajectory.error


async def test_episode_limit_ends_in_timeout(tmp_path):
    config = FAST.model_copy(update={"episode_timeout_s": 12.0, "max_steps": 100})
    trajectory = await rollout(LAB, "Add many", _SlowPolicy(0.2), never, tmp_path, config)
    assert trajectory.termination == TerminationReason.timeout and "episode" in trajectory.error
    assert 1 <= len(trajectory.steps) < 100  # cut by the episode limit, not by max_steps


class _BrokenPolicy(_SlowPolicy):
    async def act(self, observation):
        raise ConnectionError("endpoint refused")


async def test_a_failing_policy_ends_in_error_without_raising(tmp_path):
    trajectory = await rollout(LAB, "Add three", _BrokenPolicy(0), count_checker, tmp_path, FAST)
    assert trajectory.termination == TerminationReason.error and "endpoint refused" in trajectory.error
    assert Trajectory.load(tmp_path).termination == TerminationReason.error


class _PageKiller(_SlowPolicy):
    offline = True

    async def act(self, observation):
        await observation.page.close()  # the browser side dies under the rollout
        return PolicyDecision(actions=[click(INC_BUTTON)])


async def test_a_page_that_dies_mid_rollout_ends_in_error(tmp_path):
    trajectory = await rollout(LAB, "Add three", _PageKiller(0), count_checker, tmp_path, FAST)
    assert trajectory.termination == TerminationReason.error
    assert trajectory.steps and trajectory.steps[-1].error


async def test_checker_that_raises_counts_as_false_and_is_recorded(tmp_path):
    async def broken(page):
        raise RuntimeError("selector typo")

    config = FAST.model_copy(update={"max_steps": 2})
    trajectory = await rollout(LAB, "Add", scripted(click(INC_BUTTON), repeat=True), broken, tmp_path, config)
    assert trajectory.termination == TerminationReason.max_steps
    assert "selector typo" in trajectory.steps[0].checker_error


async def test_trace_zip_is_written_when_asked(tmp_path):
    config = FAST.model_copy(update={"trace": True})
    trajectory = await rollout(LAB, "Add three", scripted(click(INC_BUTTON), repeat=True), count_checker, tmp_path, config)
    assert trajectory.trace == "trace.zip"
    assert (tmp_path / "trace.zip").read_bytes()[:2] == b"PK"


async def test_concurrent_rollouts_share_one_browser_with_separate_contexts(tmp_path):
    jobs = [
        RolloutJob(LAB, "Add three", scripted(click(INC_BUTTON), repeat=True), count_checker, tmp_path / f"r{i}", task_id=f"t{i}")
        for i in range(3)
    ]
    trajectories = await run_rollouts(jobs, FAST, concurrency=2)
    assert [t.task_id for t in trajectories] == ["t0", "t1", "t2"]
    assert all(t.success and len(t.steps) == 3 for t in trajectories)  # no context saw another's clicks
    assert all(json.loads((tmp_path / f"r{i}" / "trajectory.json").read_text())["success"] for i in range(3))


# The observation is taken while the page settles; a change after the action's own effects must
# send it round again, so the step records the settled page, never the one in between.
TWO_PHASE = """<!doctype html><body style="margin:0;background:#fff">
<button id="go" style="position:absolute;left:20px;top:20px;width:100px;height:40px">go</button>
<div id="state" style="position:absolute;left:0;top:100px;width:400px;height:200px;background:#fff">idle</div>
<script>
document.getElementById('go').onclick = () => {
  const box = document.getElementById('state');
  box.textContent = 'working';                        // the action's own, synchronous effect
  setTimeout(() => { box.textContent = 'done'; box.style.background = '#f00'; }, 25);  // then a late one
};
</script></body>"""


async def _state_is_done(page) -> bool:
    from cua import isolated_world

    return await isolated_world(page).evaluate("document.getElementById('state').textContent") == "done"


async def test_a_late_change_is_in_the_step_screenshot_and_seen_by_the_checker(tmp_path):
    from PIL import Image

    trajectory = await rollout(TWO_PHASE, "Go", scripted(click((70, 40))), _state_is_done, tmp_path, FAST)
    assert trajectory.termination == TerminationReason.success, trajectory.steps
    with Image.open(tmp_path / trajectory.steps[0].screenshot) as shot:
        assert shot.convert("RGB").getpixel((300, 250)) == (255, 0, 0)  # the red of "done", not the white of "working"


TWO_PAGES = """<!doctype html><body style="margin:0">
<a id="next" href="index.html?page=2" style="position:absolute;left:20px;top:20px;width:120px;height:40px;display:block">Next</a>
<h1 id="title" style="margin-top:100px"></h1>
<script>
  document.getElementById('title').textContent = location.search === '?page=2' ? 'Page 2' : 'Page 1';
  window.addEventListener('beforeunload', e => { e.preventDefault(); e.returnValue = ''; });
</script></body>"""


class _ClickWhileThePageIsSlowToAnswer(Policy):
    """Clicks the link once, with the second page answered 0.6 s late (a loaded machine, a big page)."""

    name = "slow-second-page"
    offline = True  # so that it is handed the page

    @property
    def coordinate_space(self) -> str:
        return "screen"

    async def act(self, observation: Observation) -> PolicyDecision:
        async def late(route):
            await asyncio.sleep(0.6)
            await route.fallback()

        await observation.page.context.route("**/index.html?page=2", late)
        return PolicyDecision(actions=[click((80, 40))])


async def on_page_two(page) -> bool:
    return await page.evaluate("document.querySelector('#title')?.textContent === 'Page 2'")


async def test_a_link_to_another_page_of_the_app_is_observed_on_the_page_it_leads_to(tmp_path):
    config = RolloutConfig(max_steps=1, step_timeout_s=20, episode_timeout_s=60)
    trajectory = await rollout(TWO_PAGES, "Go to page 2", _ClickWhileThePageIsSlowToAnswer(), on_page_two, tmp_path, config)
    assert trajectory.termination == TerminationReason.success, (trajectory.termination, trajectory.error)
    assert [d.kind for d in trajectory.dialogs] == ["beforeunload"]
    [step] = trajectory.steps
    assert step.checker_passed and step.screen_changed and step.dom_changed


# Counts every press anywhere on the page: a point that was refused must not add to it.
