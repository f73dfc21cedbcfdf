"""A task's reference solution as a person plays it — an expert to imitate, or the proof that an environment's reward
is reachable: `perturb.SolutionPolicy` (a click at an element's centre, select-all + typing for a field, the option
of a drop-down drawn in the page), and for an exact value on a slider the arrow keys after the click (a click lands
on a pixel, and a pixel of a 200-value slider is more than one value). `perturb`'s own policy stays as it is: the
defect dataset was made with it.

    policy = ReferencePolicy(task.solution)
    for action in env.unwrapped.ask(policy): env.step(action)   # until the episode ends
"""

from __future__ import annotations

from cua import Action, Observation, PolicyDecision
from perturb import SolutionPolicy

_VALUE = "e => [Number(e.value), Number(e.step) || 1, (e.getAttribute('type') || '').toLowerCase()]"


class ReferencePolicy(SolutionPolicy):
    """`SolutionPolicy`, then right / left until a slider a `fill` step set shows the step's value."""

    name = "reference"

    def __init__(self, solution):
        super().__init__(solution)
        self.nudging: tuple[str, float] | None = None  # (selector, value) of the slider being set

    async def act(self, observation: Observation) -> PolicyDecision:
        page = observation.page
        if self.nudging is not None:
            selector, wanted = self.nudging
            value, step, _ = await page.locator(selector).first.evaluate(_VALUE)
            presses = round((wanted - value) / step)
            if presses:
                return PolicyDecision(actions=[Action(kind="hotkey", keys=["right" if presses > 0 else "left"])],
                                      thought=f"{selector}: {value:g} → {wanted:g}")
            self.nudging = None
        at = self.position
        starting = not self.pending and self.option is None and at < len(self.solution)
        decision = await super().act(observation)
        step = self.solution[at] if starting else None
        if step is not None and self.position == at + 1 and step.action == "fill" and step.value is not None:
            kind = (await page.locator(step.selector).first.evaluate(_VALUE))[2]
            if kind == "range":
                self.nudging = (step.selector, float(step.value))
        return decision
