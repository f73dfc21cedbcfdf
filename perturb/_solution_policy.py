"""An offline agent that carries out a task's reference solution the way a person would: by pointer and keys.

The reference solution acts through selectors (`verifier`'s replay); agents never do. To collect
transition tuples on a defect-injected app — where a step must act on the bound element through
the same executor, probes and screenshots as any agent — this policy reads the page (it is
offline, so the rollout hands it the page) and turns each step into coordinate actions: a click
at the element's centre, a hover, a click + select-all + typing for a field, a click on a range at
the value's place, a click on a select and then on its option (drawn in the page), the key for a
`press`, a wait. An element outside the viewport is scrolled to first. A step whose element
cannot be found ends the rollout with `finished`, saying which.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from playwright.async_api import Page

from apps_prompts import SolutionStep
from cua import Action, Observation, Point, Policy, PolicyDecision

FIND_TIMEOUT_MS = 2_000
MAX_SCROLLS_PER_STEP = 3
KEY_NAMES = {"Enter": "enter", "Escape": "esc", "Tab": "tab", "Backspace": "backspace", "Space": "space",
             "ArrowDown": "down", "ArrowUp": "up", "ArrowLeft": "left", "ArrowRight": "right"}


class SolutionPolicy(Policy):
    """Follows `solution` step by step in screen coordinates (see the module docstring)."""

    name: ClassVar[str] = "solution"
    offline: ClassVar[bool] = True

    def __init__(self, solution: Sequence[SolutionStep]):
        self.solution = list(solution)
        self.position = 0
        self.pending: list[Action] = []  # what the current step still has to do (the option of a select)
        self.scrolls = 0
        self.option: tuple[str, str] | None = None  # a select step's option, clicked once the drop-down is open

    @property
    def coordinate_space(self) -> str:
        return "screen"

    def settings(self) -> dict:
        return {"steps": len(self.solution)}

    async def act(self, observation: Observation) -> PolicyDecision:
        page = observation.page
        if page is None:
            return _finished("the solution policy needs the page (it is an offline, DOM-reading policy)")
        if self.option is not None:
            selector, value = self.option
            self.option = None
            point = await _option_point(page, selector, value)
            if point is None:
                return _finished(f"step {self.position}: the option {value!r} of {selector} was not drawn")
            return PolicyDecision(actions=[Action(kind="click", point=point)], thought=f"pick {value!r}")
        if self.pending:
            return PolicyDecision(actions=[self.pending.pop(0)])
        if self.position >= len(self.solution):
            return _finished("the reference solution is done")
        step = self.solution[self.position]
        width, height = observation.viewport_width, observation.viewport_height
        if step.action == "wait":
            self.position += 1
            return PolicyDecision(actions=[Action(kind="wait")], thought=f"wait for {step.selector}")
        box = await _box(page, step.selector)
        if box is None:
            return _finished(f"step {self.position + 1}: no visible element matches {step.selector}")
        centre = Point(x=box["x"] + box["width"] / 2, y=box["y"] + box["height"] / 2)
        if not (0 <= centre.y < height and 0 <= centre.x < width):
            if self.scrolls >= MAX_SCROLLS_PER_STEP:
                return _finished(f"step {self.position + 1}: {step.selector} stays outside the viewport")
            self.scrolls += 1
            direction = "down" if centre.y >= height else "up"
            return PolicyDecision(actions=[Action(kind="scroll", point=Point(x=width / 2, y=height / 2),
                                                  direction=direction, amount=round(abs(centre.y - height / 2)))],
                                  thought=f"scroll to {step.selector}")
        self.position += 1
        self.scrolls = 0
        actions = await self._actions(page, step, centre, box)
        self.pending = actions[1:]
        return PolicyDecision(actions=actions[:1], thought=f"{step.action} {step.selector}")

    async def _actions(self, page: Page, step: SolutionStep, centre: Point, box: dict) -> list[Action]:
        match step.action:
            case "dblclick":
                return [Action(kind="left_double", point=centre)]
            case "hover":
                return [Action(kind="move", point=centre)]
            case "press":
                keys = [KEY_NAMES.get(part, part.lower()) for part in (step.value or "Enter").split("+")]
                return [Action(kind="hotkey", keys=keys)]
            case "select":
                self.option = (step.selector, step.value or "")  # its place is known once the drop-down is drawn
                return [Action(kind="click", point=centre)]
            case "fill":
                if (await page.locator(step.selector).first.get_attribute("type") or "").lower() == "range":
                    return [Action(kind="click", point=await _range_point(page, step.selector, step.value or "", box))]
                return [Action(kind="click", point=centre), Action(kind="hotkey", keys=["ctrl", "a"]),
                        Action(kind="type", text=step.value or "")]
        return [Action(kind="click", point=centre)]  # click, check


def _finished(why: str) -> PolicyDecision:
    return PolicyDecision(actions=[Action(kind="finished")], thought=why)


async def _box(page: Page, selector: str) -> dict | None:
    locator = page.locator(selector).first
    try:
        await locator.wait_for(state="visible", timeout=FIND_TIMEOUT_MS)
        return await locator.bounding_box(timeout=FIND_TIMEOUT_MS)
    except Exception:  # not there, not visible: the step cannot be done by pointer
        return None


async def _option_point(page: Page, selector: str, value: str) -> Point | None:
    """The centre of the option with `value` (or that label) of the open drop-down, if it is drawn."""
    select = page.locator(selector).first
    for option in (select.locator(f"option[value={_quoted(value)}]"), select.locator("option", has_text=value)):
        try:
            box = await option.first.bounding_box(timeout=FIND_TIMEOUT_MS)
        except Exception:
            box = None
        if box and box["width"] > 0 and box["height"] > 0:
            return Point(x=box["x"] + box["width"] / 2, y=box["y"] + box["height"] / 2)
    return None


async def _range_point(page: Page, selector: str, value: str, box: dict) -> Point:
    """Where on a range input a click sets `value` (its place between min and max)."""
    locator = page.locator(selector).first
    low = float(await locator.get_attribute("min") or 0)
    high = float(await locator.get_attribute("max") or 100)
    try:
        share = (float(value) - low) / (high - low) if high > low else 0.5
    except ValueError:
        share = 0.5
    share = min(1.0, max(0.0, share))
    return Point(x=box["x"] + 8 + share * max(0.0, box["width"] - 16), y=box["y"] + box["height"] / 2)


def _quoted(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
