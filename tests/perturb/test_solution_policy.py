"""The solution-following agent waits out an app's short timers, so a timer lock cannot swallow a step."""

from __future__ import annotations

from apps_prompts import SolutionStep
from cua import RolloutConfig, rollout
from perturb import SolutionPolicy
from verifier import rollout_checker

# Like memory-garden's board: a click locks the button for 700 ms (a click inside the lock is
# ignored); the lock's timer sets a second, short one. A 30 s clock tick (not short) and a
# self-rearming 50 ms chain (a clock: only its first two links count) must not hold the agent.
LOCKING_APP = """<!doctype html><html><body style="margin:0">
<button id="flip" style="position:absolute;left:40px;top:40px;width:160px;height:50px">Flip</button>
<p id="count">0</p><p id="tail"></p>
<script>
let locked = false, count = 0;
setTimeout(() => {}, 30000);
document.querySelector('#flip').onclick = () => {
  if (locked) return;
  count += 1; document.querySelector('#count').textContent = String(count);
  locked = true;
  setTimeout(() => { locked = false; setTimeout(() => { document.querySelector('#tail').textContent = 'done ' + count; }, 200); }, 700);
  const tick = () => setTimeout(tick, 50); if (count === 1) tick();
};
</script></body></html>"""

SOLUTION = [SolutionStep(action="click", selector="#flip"), SolutionStep(action="click", selector="#flip"),
            SolutionStep(action="click", selector="#flip")]


async def test_a_timer_locked_step_is_waited_for_not_swallowed(tmp_path):
    config = RolloutConfig(max_steps=20, stuck_no_change_steps=0, stuck_repeat_steps=0)
    trajectory = await rollout(LOCKING_APP, "Flip three times", SolutionPolicy(SOLUTION),
                               rollout_checker("return document.querySelector('#count').textContent === '3'"),
                               tmp_path, config, app_id="lock", task_id="flip-3")
    kinds = [step.screen_action.kind for step in trajectory.steps if step.screen_action is not None]
    assert trajectory.success, kinds
    assert kinds.count("click") == 3
    # between clicks: a wait for the lock's timer, one for the timer it set; never more than the cap per step
    waits_between = [len(run) for run in "".join("w" if kind == "wait" else "|" for kind in kinds).split("|")[1:-1]]
    assert waits_between and all(1 <= n <= 3 for n in waits_between), kinds
    thoughts = [step.thought or "" for step in trajectory.steps]
    assert any("pending timer" in thought for thought in thoughts)
