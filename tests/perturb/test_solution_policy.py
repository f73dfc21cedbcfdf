"""Rollouts that wait out an app's short timers (`BrowserConfig.short_timers_ms`): a timer lock cannot swallow a step.

The solution-following agent of the defect dataset acts as fast as the machine runs; on an app that
locks itself for a moment after a click (memory-garden's board) its next click would land inside
the lock on a fast machine and after it on a slow one. With the timers waited out after each step,
every click meets the app at rest, and each observation shows the action's delayed effects.
"""

from __future__ import annotations

from apps_prompts import SolutionStep
from cua import BrowserConfig, RolloutConfig, Trajectory, rollout, transition_tuples
from perturb import SolutionPolicy
from verifier import rollout_checker

# A click locks the button for 700 ms (a click inside the lock is ignored); the lock's timer sets a
# second, short one. A 30 s timer (not short) and a self-rearming 50 ms chain (a clock: only its
# first two links count) must not hold the rollout.
LOCKING_APP = """<!doctype html><html><body style="margin:0">
<button id="flip" style="position:absolute;left:40px;top:40px;width:160px;height:50px">Flip</button>
<p id="count">0</p><p id="tail"></p>
<script>
let locked = false, count = 0;
setTimeout(() => {}, 30000);
document.querySelector('#flip').onclick = () => {
  if (locked) return;
  count += 1; document.querySelector('#count').textContent = String(count);
  locked = true; document.querySelector('#flip').textContent = 'Wait…';
  setTimeout(() => {
    locked = false; document.querySelector('#flip').textContent = 'Flip';
    setTimeout(() => { document.querySelector('#tail').textContent = 'done ' + count; }, 200);
  }, 700);
  const tick = () => setTimeout(tick, 50); if (count === 1) tick();
};
</script></body></html>"""

SOLUTION = [SolutionStep(action="hover", selector="#count")] + [SolutionStep(action="click", selector="#flip")] * 3
CHECKER = "return document.querySelector('#count').textContent === '3'"


async def _roll(tmp_path, short_timers_ms: int) -> Trajectory:
    config = RolloutConfig(max_steps=7, stuck_no_change_steps=0, stuck_repeat_steps=0,
                           browser=BrowserConfig(short_timers_ms=short_timers_ms))
    return await rollout(LOCKING_APP, "Flip three times", SolutionPolicy(SOLUTION), rollout_checker(CHECKER),
                         tmp_path, config, app_id="lock", task_id="flip-3", seed=0, fixed_clock=True)


async def test_with_short_timers_waited_out_every_click_counts_and_each_after_state_is_at_rest(tmp_path):
    trajectory = await _roll(tmp_path / "waited", 3_000)
    assert trajectory.success and trajectory.short_timers_ms == 3_000
    clicks = [step for step in trajectory.steps if step.screen_action and step.screen_action.kind == "click"]
    assert len(clicks) == 3 and all(step.dom_changed for step in clicks)
    # each step's observation came after the lock and its follow-up timer fired (not after the 30 s one)
    assert all("timers" in step.timings.settle_waited_for for step in clicks)
    hover = trajectory.steps[0]
    assert hover.screen_action.kind == "move" and "timers" not in hover.timings.settle_waited_for  # none pending
    assert "done 3" in (trajectory.final_text or "")  # the last click's follow-up timer had fired when observed
    tuples = transition_tuples(trajectory)
    assert [item.action.kind for item in tuples] == ["move"] + ["click"] * 3


async def test_without_it_the_lock_swallows_the_next_click(tmp_path):
    trajectory = await _roll(tmp_path / "plain", 0)
    assert trajectory.short_timers_ms == 0 and not trajectory.success
    clicks = [step for step in trajectory.steps if step.screen_action and step.screen_action.kind == "click"]
    assert clicks[1].dom_changed is False  # it landed inside the lock
