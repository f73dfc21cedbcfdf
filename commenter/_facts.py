"""Measured facts of an app page and a trajectory: what the offline commenter (and coder) act on.

- The page, freshly loaded at the run's viewport (`cua.DEFAULT_VIEWPORT` by default): controls outside the viewport, obscured controls,
  targets under 24×24 px, controls without ids, sliders with no way to type the value, CSS
  animations and transitions, live regions and toast-like elements.
- axe-core (the copy shipped inside `axe-playwright-python`, so offline): insufficient contrast
  and controls without an accessible name.
- The trajectory: steps whose action changed nothing in the DOM.
- A replay of the trajectory's actions on a fresh page under Playwright's fake clock: text that
  appeared after an action and vanished within the next 10 s of (fast-forwarded) time is state
  shown only transiently (toasts, self-emptying status regions).
"""

from __future__ import annotations

import asyncio
import copy
import hashlib
import re
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

from playwright.async_api import Page
from pydantic import BaseModel, Field

from cua import (
    DEFAULT_VIEWPORT,
    BrowserConfig,
    PageTransform,
    Step,
    Trajectory,
    Viewport,
    execute,
    isolated_world,
    open_app,
)

AXE_RULES = {"color-contrast": "contrast", **dict.fromkeys((
    "button-name", "link-name", "label", "input-button-name", "aria-input-field-name", "aria-command-name",
    "aria-toggle-field-name", "select-name", "image-alt"), "name")}
# The page measurements ("measure", "snapshot", "elementAt"), run in the harness's isolated world.
PAGE_FACTS_JS = Path(__file__).with_name("_page_facts.js").read_text(encoding="utf-8")
TRANSIENT_WINDOW_MS = 10_000
REPLAY_MAX_STEPS = 30
REPLAY_BUDGET_S = 30.0
_STOPWORDS = set(
    "the a an and or to of in on for with by at from into your you it its is are be then than this that these those "
    "set make click press tap enter type select choose use change add open show find go get put all any one two".split()
)


class ElementFact(BaseModel):
    """One element, named the way a coder can find it."""

    selector: str
    id: str | None = None
    tag: str = ""
    type: str | None = Field(default=None, description="The type attribute, or the ARIA role.")
    text: str = Field(default="", description="Visible text or accessible label, truncated.")
    box: dict[str, float] | None = Field(default=None, description="Page coordinates (x, y include scrolling).")
    detail: str | None = Field(default=None, description="What was measured, e.g. '16×16 px' or 'contrast 2.1:1'.")


class AnimationFact(BaseModel):
    selector: str
    name: str = ""
    infinite: bool = False


class NoEffectStep(BaseModel):
    step: int
    action: str
    selector: str | None = None
    text: str = ""


class OfflineFacts(BaseModel):
    """What was measured, in a structured form the offline coder can act on."""

    viewport_width: int = DEFAULT_VIEWPORT.width
    viewport_height: int = DEFAULT_VIEWPORT.height
    page_width: int = 0
    page_height: int = 0
    measured_page: bool = Field(default=False, description="False when no app HTML was given (trajectory facts only).")
    controls: int = Field(default=0, description="Visible interactive elements measured.")
    off_viewport_controls: list[ElementFact] = Field(default_factory=list)
    task_controls_off_viewport: list[ElementFact] = Field(
        default_factory=list, description="Off-viewport controls the task needed (named by the task or a step)."
    )
    obscured_controls: list[ElementFact] = Field(default_factory=list, description="In the viewport but covered or clipped.")
    small_targets: list[ElementFact] = Field(default_factory=list)
    missing_ids: list[ElementFact] = Field(default_factory=list)
    slider_only_inputs: list[ElementFact] = Field(default_factory=list)
    animations: list[AnimationFact] = Field(default_factory=list)
    transitions: list[AnimationFact] = Field(default_factory=list)
    low_contrast: list[ElementFact] = Field(default_factory=list)
    unnamed_controls: list[ElementFact] = Field(default_factory=list)
    live_regions: list[ElementFact] = Field(default_factory=list)
    toast_like: list[ElementFact] = Field(default_factory=list)
    transient_status: list[ElementFact] = Field(default_factory=list, description="Text that appeared and vanished on its own.")
    no_effect_steps: list[NoEffectStep] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list, description="What could not be measured, and why.")

    @property
    def overflows_viewport(self) -> bool:
        return self.page_width > self.viewport_width or self.page_height > self.viewport_height


def task_words(text: str) -> set[str]:
    """Content words of a task ('Set the volume to 40' → {'volume', '40'})."""
    words = {w for w in re.findall(r"[a-z0-9]+", text.lower()) if len(w) >= 3 or w.isdigit()}
    return words - _STOPWORDS


def _element_words(element: ElementFact) -> set[str]:
    spaced = re.sub(r"([a-z])([A-Z])", r"\1 \2", f"{element.id or ''} {element.text}")
    return {w for w in re.findall(r"[a-z0-9]+", spaced.lower()) if len(w) >= 3} - _STOPWORDS


def needed_by_task(element: ElementFact, words: set[str], selectors: set[str]) -> bool:
    if element.selector in selectors or (element.id and f"#{element.id}" in selectors):
        return True
    return bool(words & _element_words(element))


async def run_axe(page: Page) -> tuple[list[ElementFact], list[ElementFact]]:
    """(low-contrast elements, controls without accessible names) from axe-core, run offline."""
    from axe_playwright_python.async_playwright import Axe

    options = {"runOnly": {"type": "rule", "values": list(AXE_RULES)}, "resultTypes": ["violations"]}
    results = await Axe().run(page, options=options)
    contrast: list[ElementFact] = []
    names: list[ElementFact] = []
    for violation in results.response.get("violations", []):
        kind = AXE_RULES.get(violation.get("id"))
        for node in violation.get("nodes", []):
            target = node.get("target") or ["?"]
            selector = target[0] if isinstance(target[0], str) else " ".join(map(str, target[0]))
            html = node.get("html", "")
            detail = violation["id"]
            if kind == "contrast":
                data = (node.get("any") or [{}])[0].get("data") or {}
                if data.get("contrastRatio"):
                    detail = f"contrast {data['contrastRatio']}:1, needs {data.get('expectedContrastRatio', '4.5:1')}"
            fact = ElementFact(selector=selector, id=_id_of(selector), tag=_tag_of(html), text=_text_of(html), detail=detail)
            (contrast if kind == "contrast" else names).append(fact)
    return contrast, names


def _id_of(selector: str) -> str | None:
    match = re.fullmatch(r"#([\w-]+)", selector)
    return match.group(1) if match else None


def _tag_of(html: str) -> str:
    match = re.match(r"<\s*([a-zA-Z0-9-]+)", html)
    return match.group(1).lower() if match else ""


def _text_of(html: str) -> str:
    return " ".join(re.sub(r"<[^>]+>", " ", html).split())[:80]


def no_effect_steps(trajectory: Trajectory) -> list[NoEffectStep]:
    """Steps whose action the rollout saw change nothing in the DOM (`Step.dom_changed is False`)."""
    found = []
    for step in trajectory.steps:
        action, target = step.screen_action, step.target
        if step.dom_changed is False and action is not None and action.kind not in ("wait", "finished"):
            selector = (target.selector or (f"#{target.id}" if target.id else target.tag)) if target else None
            found.append(NoEffectStep(step=step.index, action=action.describe(), selector=selector,
                                      text=(target.text if target else "")[:60]))
    return found


async def replay_for_transients(page: Page, steps: list[Step]) -> list[ElementFact]:
    """Replay `steps` on `page` under a fake clock; return text that appeared and then vanished by itself."""
    world = isolated_world(page)
    await page.clock.install()  # timers the app sets from here on run on our fast-forwarded time
    transient: dict[str, ElementFact] = {}
    for step in steps[:REPLAY_MAX_STEPS]:
        action = step.screen_action
        if action is None or action.kind in ("finished",):
            continue
        before = await world.call(PAGE_FACTS_JS, "snapshot", timeout_ms=5_000)
        await execute(page, action)
        # fast_forward jumps time, firing each due timer at most once: a 2 s toast timeout fires,
        # while an app's animation loop does not run hundreds of frames (run_for would).
        await page.clock.fast_forward(300)
        shown = await world.call(PAGE_FACTS_JS, "snapshot", timeout_ms=5_000)
        await page.clock.fast_forward(TRANSIENT_WINDOW_MS)
        later = await world.call(PAGE_FACTS_JS, "snapshot", timeout_ms=5_000)
        for key, item in shown.items():
            appeared = key not in before or before[key]["text"] != item["text"]
            if appeared and key not in later and item["selector"] not in transient:
                transient[item["selector"]] = ElementFact(
                    selector=item["selector"], id=_id_of(item["selector"]), text=item["text"], detail=f"shown after step {step.index}, gone within {TRANSIENT_WINDOW_MS // 1000} s"
                )
    return list(transient.values())


async def collect_facts(
    html: str | bytes | None,
    trajectory: Trajectory | None = None,
    *,
    task: str | None = None,
    use_axe: bool = True,
    replay: bool = True,
    transform: PageTransform | None = None,
) -> OfflineFacts:
    """Measure the app (when `html` is given) and the trajectory (when given).

    `transform`: the serve-time change the app was shown with (a variation, an injected defect), so the
    page measured is the one the agent saw. Controls the task needs are those its words or the
    trajectory's steps name. Never raises for what the app does: failures become `notes`.
    """
    viewport = trajectory.viewport if trajectory is not None else DEFAULT_VIEWPORT  # the size the agent saw
    facts = OfflineFacts(viewport_width=viewport.width, viewport_height=viewport.height)
    if trajectory is not None:
        facts.no_effect_steps = no_effect_steps(trajectory)
    task_text = task if task is not None else (trajectory.task if trajectory else "")
    if html is None:
        facts.notes.append("no app HTML given: page facts not measured")
        return facts
    config = BrowserConfig(viewport=viewport, transform=transform)
    key = _load_state_key(html, transform, viewport, use_axe)
    measured = _LOAD_STATES.get(key)
    named = measured is None  # no-effect targets are named on the first page opened
    if measured is None:
        async with open_app(html, config) as app:
            measured = await _measure_load_state(app.page, viewport, use_axe)
            await _name_no_effect_targets(app.page, facts, trajectory)
        _remember_load_state(key, measured)
    _fill_from_load_state(facts, measured, task_text, trajectory)
    replaying = replay and trajectory is not None and bool(trajectory.steps)
    if not named or replaying:
        async with open_app(html, config) as app:
            if not named:  # the fresh page, before the replay touches it, is the page at load
                await _name_no_effect_targets(app.page, facts, trajectory)
            if not replaying:
                return facts
            try:
                facts.transient_status = await asyncio.wait_for(
                    replay_for_transients(app.page, trajectory.steps), REPLAY_BUDGET_S
                )
            except asyncio.TimeoutError:
                facts.notes.append(f"replay for transient state stopped after {REPLAY_BUDGET_S:.0f} s")
            except Exception as exc:
                facts.notes.append(f"replay for transient state failed: {type(exc).__name__}: {(str(exc).splitlines() or [''])[0][:200]}")
    return facts


@dataclass(frozen=True)
class _LoadState:
    """What the page measures at load, the same for every trajectory of one app version: the raw
    measurement, axe-core's findings (or why axe failed)."""

    raw: dict
    low_contrast: tuple[ElementFact, ...] = ()
    unnamed_controls: tuple[ElementFact, ...] = ()
    axe_note: str | None = None


LOAD_STATES_KEPT = 64
_LOAD_STATES: OrderedDict[tuple, _LoadState] = OrderedDict()
"""The load-state measurements of the app versions commented on last (a comment stage measures one
version for each of its trajectories: measured once, not once a trajectory — half a comment's time)."""


def _load_state_key(html: str | bytes, transform: PageTransform | None, viewport: Viewport, use_axe: bool) -> tuple:
    body = html.encode("utf-8") if isinstance(html, str) else html
    return (hashlib.sha256(body).hexdigest(), transform.sha256 if transform else None,
            viewport.width, viewport.height, use_axe)


def _remember_load_state(key: tuple, measured: _LoadState) -> None:
    _LOAD_STATES[key] = measured
    _LOAD_STATES.move_to_end(key)
    while len(_LOAD_STATES) > LOAD_STATES_KEPT:
        _LOAD_STATES.popitem(last=False)


async def _measure_load_state(page: Page, viewport: Viewport, use_axe: bool) -> _LoadState:
    # the raw measurement of the loaded page (see `measure` in `_page_facts.js`)
    raw = await isolated_world(page).call(PAGE_FACTS_JS, "measure", viewport.width, viewport.height, timeout_ms=10_000)
    if not use_axe:
        return _LoadState(raw=raw)
    try:
        contrast, names = await run_axe(page)
    except Exception as exc:  # the app can break axe (it runs in the page's own world)
        return _LoadState(raw=raw, axe_note=f"axe-core failed: {type(exc).__name__}: {(str(exc).splitlines() or [''])[0][:200]}")
    return _LoadState(raw=raw, low_contrast=tuple(contrast), unnamed_controls=tuple(names))


async def _name_no_effect_targets(page: Page, facts: OfflineFacts, trajectory: Trajectory | None) -> None:
    """Name the element under a no-effect step's point on the fresh page, when the rollout did not."""
    if trajectory is None:
        return
    for item in facts.no_effect_steps:
        action = trajectory.steps[item.step - 1].screen_action if 0 < item.step <= len(trajectory.steps) else None
        if item.selector or action is None or action.point is None:
            continue
        if any(s.screen_action and s.screen_action.kind == "scroll" for s in trajectory.steps[: item.step - 1]):
            continue  # the page scrolled before: the fresh page's element at that point is another one
        found = await isolated_world(page).call(PAGE_FACTS_JS, "elementAt", action.point.x, action.point.y)
        if found:
            item.selector, item.text = found["selector"], found["text"][:60]


def _fill_from_load_state(facts: OfflineFacts, measured: _LoadState, task_text: str,
                          trajectory: Trajectory | None) -> None:
    raw = copy.deepcopy(measured.raw)
    facts.measured_page = True
    facts.page_width, facts.page_height = int(raw["page_width"]), int(raw["page_height"])
    facts.controls = len(raw["controls"])
    as_facts = lambda items: [ElementFact(**item) for item in items]  # noqa: E731 (local shorthand)
    facts.off_viewport_controls = as_facts(raw["off_viewport"])
    facts.obscured_controls = as_facts(raw["obscured"])
    facts.small_targets = [
        fact.model_copy(update={"detail": f"{fact.box['width']:.0f}×{fact.box['height']:.0f} px"}) for fact in as_facts(raw["small"])
    ]
    facts.missing_ids = as_facts(raw["missing_ids"])
    facts.slider_only_inputs = as_facts(raw["slider_only"])
    facts.animations = [AnimationFact(**item) for item in raw["animated"]]
    facts.transitions = [AnimationFact(selector=item["selector"], name=item.get("property") or "") for item in raw["transitions"]]
    facts.live_regions = as_facts(raw["live_regions"])
    facts.toast_like = as_facts(raw["toast_like"])
    words = task_words(task_text)
    targets = [step.target for step in trajectory.steps if step.target is not None] if trajectory else []
    selectors = {name for t in targets for name in (t.selector, t.id and f"#{t.id}") if name}
    facts.task_controls_off_viewport = [f for f in facts.off_viewport_controls if needed_by_task(f, words, selectors)]
    facts.low_contrast = [fact.model_copy(deep=True) for fact in measured.low_contrast]
    facts.unnamed_controls = [fact.model_copy(deep=True) for fact in measured.unnamed_controls]
    if measured.axe_note:
        facts.notes.append(measured.axe_note)
