"""The offline defect detector: measured facts, no model — an honest baseline, labelled offline.

It replays a trajectory's actions on a fresh page of the app the agent saw (same transform, seed
and clock), measures the element each action acts on before and after it (`_tuple_facts.js`),
and applies fixed rules, interaction ones first:

- **no-response**: a click on a control that changed nothing in the DOM (the rollout's own record);
- **input-keyboard**: typed text that did not arrive (the field kept its value, or shows only some
  of the keys), or Enter on a field that changed nothing;
- **unexpected-result**: typed text that arrived changed, or a drop-down showing another option
  than the one clicked;
- **navigation-error**: a click on one of several controls of a kind with a selected state (tabs,
  menu items) after which another of them is the selected one;
- display, on the state before the action: the element is not drawn, or drawn elements beside it
  in the defect-free version are not (**element-missing**, the latter only with a reference); it
  looks faded, grey or not-allowed while enabled (**abnormal-state**); a positioned element covers
  part of it (**elements-overlapping**); a value near it reads NaN, undefined, null, [object
  Object] or a number with a long tail of decimals or an exponent (**data-format-error**); its words
  differ from the defect-free version's (**content-error**, only with a reference); and against
  the elements of its kind beside it: another colour (**inconsistent-colour**), another height or
  font size, or clipped text (**inconsistent-size**), other margins (**uneven-spacing**), out of
  their common line (**misalignment**).

**Reference-assisted or blind.** Given the defect-free version (`reference_html`), the detector
replays it beside the app and compares — an oracle GTArena's detectors do not have (they see the
screens of the app under test only), so its figures are labelled *reference-assisted*. The blind
variant (`OfflineDetector(blind=True)`, registered as `offline-blind`) never opens the defect-free
version, whatever it is given: the rules that need it (element-missing beside the target,
content-error, overlaps the defect-free version has too) stay off, and its figures compare like for
like with published detectors.

It cannot see what a rule does not measure (a click counted twice on a plain button, a link to
the wrong place without a selected state), and elements that differ on purpose (a primary button
among secondary ones, the active tab) look inconsistent to it: its figures say how far rules go.
"""

from __future__ import annotations

import contextlib
import math
import re
from operator import itemgetter
from pathlib import Path
from typing import Any

from cua import (
    TIMERS_GRACE_MS,
    BrowserConfig,
    PageTransform,
    Trajectory,
    TransitionTuple,
    execute,
    isolated_world,
    open_app,
    settle,
    transition_tuples,
    wait_for_short_timers,
)

from ._records import Detection

OFFLINE_DETECTOR = "offline"
OFFLINE_BLIND_DETECTOR = "offline-blind"
OFFLINE_VERSION = "offline-detector-1"
NEAR_PX = 24  # the neighbourhood of the target: the padding of the region a display defect is proven in
MEASURE_TIMEOUT_MS = 10_000
_FACTS_JS = Path(__file__).with_name("_tuple_facts.js").read_text(encoding="utf-8")
_BAD_VALUE = re.compile(r"\bNaN\b|\bundefined\b|\bnull\b|\[object Object\]|\bInfinity\b|\d\.\d{6,}|\d(\.\d+)?e[+-]\d")
_INTERACTIVE = {"button", "a", "input", "select", "textarea", "summary", "label"}


class OfflineDetector:
    """The rule-based detector of this module (see its docstring). One call per trajectory.

    `blind`: never open the defect-free version (`reference_html` is ignored), so no rule compares with it.
    """

    offline = True

    def __init__(self, *, blind: bool = False):
        self.blind = blind
        self.name = OFFLINE_BLIND_DETECTOR if blind else OFFLINE_DETECTOR
        self.uses_reference = not blind

    async def detect_trajectory(self, folder: Path | str, html: str, *, trajectory_id: str,
                                transform: PageTransform | None = None, reference_html: str | None = None,
                                tuples: list[TransitionTuple] | None = None, task: str | None = None) -> list[Detection]:
        """One detection per tuple of the trajectory in `folder`, which ran on `html` under `transform` (the
        `Detector` protocol of `get_detector`; the rules read no `task`).

        `reference_html`: the defect-free version (served without a transform) for the rules that
        compare with it; a blind detector never opens it. Never raises for what the app does: a replay
        that fails marks the rest errors.
        """
        trajectory = Trajectory.load(Path(folder))
        tuples = tuples if tuples is not None else transition_tuples(trajectory)
        by_step = {item.step: item for item in tuples}
        detections: dict[int, Detection] = {}
        unjudged = "the step was not replayed"
        # the replay waits for the app's timers where the rollout did, so it meets the states the rollout saw
        timers_ms = trajectory.short_timers_ms
        config = BrowserConfig(viewport=trajectory.viewport, transform=transform, short_timers_ms=timers_ms)
        opened = dict(seed=trajectory.seed, fixed_clock=trajectory.fixed_clock)
        async with contextlib.AsyncExitStack() as stack:
            try:
                app = await stack.enter_async_context(open_app(html, config, **opened))
                reference = None
                if reference_html is not None and not self.blind:
                    clean = BrowserConfig(viewport=trajectory.viewport, short_timers_ms=timers_ms)
                    reference = await stack.enter_async_context(open_app(reference_html, clean, **opened))
                pages = [app.page] + ([reference.page] if reference else [])
                for page in pages:
                    await _settle_with_timers(page, timers_ms)
                for step in trajectory.steps:
                    action = step.screen_action
                    if action is None or action.kind == "finished":
                        continue
                    point = action.point if action.kind not in ("type", "hotkey") else None
                    x, y = (point.x, point.y) if point is not None else (None, None)
                    measure = action.kind not in ("wait", "scroll", "drag")
                    before = await _measure(app.page, "before", x, y) if measure else {}
                    ref_before = await _measure(reference.page, "before", x, y) if measure and reference else None
                    for page in pages:
                        await execute(page, action)
                        await _settle_with_timers(page, timers_ms)
                    after = await _measure(app.page, "after", x, y) if measure else {}
                    if step.index in by_step:
                        item = by_step[step.index]
                        kind, evidence = judge(item, before, after, ref_before)
                        detections[step.index] = Detection(
                            trajectory=trajectory_id, step=item.step, detector=self.name, offline=True,
                            defect=kind is not None, type=kind, evidence=evidence, truth=item.defect,
                            prompt_version=OFFLINE_VERSION)
            except Exception as exc:  # the app or the browser broke the replay: what is left is not judged
                unjudged = f"replay failed: {type(exc).__name__}: {str(exc).splitlines()[0][:200] if str(exc) else ''}"
        return [detections.get(item.step) or Detection(
            trajectory=trajectory_id, step=item.step, detector=self.name, offline=True, truth=item.defect,
            error=unjudged, prompt_version=OFFLINE_VERSION) for item in tuples]


async def _settle_with_timers(page, timers_ms: int) -> None:
    await settle(page)
    if timers_ms:
        waited = await wait_for_short_timers(page, timers_ms + TIMERS_GRACE_MS)
        if waited.get("had"):
            await settle(page)


async def _measure(page, what: str, x: float | None, y: float | None) -> dict[str, Any]:
    found = await isolated_world(page).call(_FACTS_JS, what, x, y, NEAR_PX, timeout_ms=MEASURE_TIMEOUT_MS)
    return found if isinstance(found, dict) else {}


def judge(item: TransitionTuple, before: dict, after: dict, reference: dict | None) -> tuple[str | None, str]:
    """(defect type or None, evidence) for one tuple from its measured facts (the module's rules, in order)."""
    for rule in (_interaction, _display):
        kind, evidence = rule(item, before, after, reference)
        if kind is not None:
            return kind, evidence
    return None, "no rule fired"


# ---- interaction ---------------------------------------------------------------------------------

def _interaction(item: TransitionTuple, before: dict, after: dict, reference: dict | None) -> tuple[str | None, str]:
    target, later = before.get("target"), after.get("target")
    action = item.action
    name = f"`{target['selector']}`" if target else "the page"
    if action.kind in ("click", "left_double") and item.dom_changed is False and target and _interactive(target):
        return "no-response", f"{item.action_text} on {name} changed nothing in the DOM"
    if action.kind == "type" and target and later and target.get("value") is not None:
        typed = (action.text or "").rstrip("\n")
        was, now = target["value"], later.get("value") or ""
        if typed and now not in (typed, was + typed):
            if now == was:
                return "input-keyboard", f"typed {typed!r} into {name}; it still holds {was!r}"
            if _subsequence(now[len(was):] if now.startswith(was) else now, typed):
                return "input-keyboard", f"typed {typed!r} into {name}; it holds {now!r} (keys lost)"
            return "unexpected-result", f"typed {typed!r} into {name}; it holds {now!r}"
    if action.kind == "hotkey" and [k.lower() for k in action.keys] == ["enter"] and item.dom_changed is False \
            and target and target["tag"] in ("input", "textarea"):
        return "input-keyboard", f"Enter in {name} changed nothing"
    option = before.get("option")
    if action.kind == "click" and option and later and later.get("tag") == "select" \
            and later.get("value") not in (None, option["value"]):
        return "unexpected-result", (f"clicked the option {option['text']!r} of {name}; it shows "
                                     f"{later.get('selected_text')!r}")
    if action.kind == "click" and target and later and before.get("peers") and item.dom_changed:
        peers_before = {p["selector"]: p["active"] for p in before["peers"]}
        newly = [p["selector"] for p in after.get("peers", []) if p["active"] and not peers_before.get(p["selector"], False)]
        if newly and not later.get("active"):
            return "navigation-error", f"clicked {name}; `{newly[0]}`, another of its kind, became the selected one"
    return None, ""


def _interactive(target: dict) -> bool:
    return target["tag"] in _INTERACTIVE or target.get("cursor") == "pointer"


def _subsequence(short: str, long: str) -> bool:
    letters = iter(long)
    return len(short) < len(long) and all(c in letters for c in short)


# ---- display -------------------------------------------------------------------------------------

def _display(item: TransitionTuple, before: dict, after: dict, reference: dict | None) -> tuple[str | None, str]:
    target = before.get("target")
    if not target:
        return None, ""
    name = f"`{target['selector']}`"
    if not target["drawn"]:
        return "element-missing", f"{item.action_text} acts on {name}, which is not drawn (opacity {target['opacity']:.2f})"
    if reference and reference.get("elements") is not None:
        here = {e["selector"]: e for e in before.get("elements", [])}
        # only elements that are here but not drawn: one absent altogether was removed by the app itself
        # (the two versions' states parted), while an injected element-missing keeps it in the DOM
        gone = [e for e in reference["elements"] if e["drawn"] and e["selector"] in here
                and not here[e["selector"]].get("drawn", False)]
        if gone:
            return "element-missing", f"`{gone[0]['selector']}` beside {name} is drawn in the defect-free version, not here"
    faded = target["opacity"] < 0.6 or "grayscale" in (target.get("filter") or "")
    if not target["disabled"] and (faded or target.get("cursor") == "not-allowed"):
        return "abnormal-state", (f"{name} looks disabled (opacity {target['opacity']:.2f}, filter {target.get('filter')}, "
                                  f"cursor {target.get('cursor')}) while it is enabled")
    overlapping = before.get("overlapping") or []
    if reference and reference.get("overlapping") is not None:
        # the defect-free version is drawn the same way (a flip card's two faces, a badge on its button): by design
        designed = {other["selector"] for other in reference["overlapping"]}
        overlapping = [other for other in overlapping if other["selector"] not in designed]
    if overlapping:
        other = overlapping[0]
        return "elements-overlapping", f"`{other['selector']}` ({other['text'][:30]!r}) is drawn over part of {name}"
    texts = [target.get("text") or "", target.get("label") or "", target.get("selected_text") or ""]
    texts += [t["text"] for t in before.get("texts", [])]
    bad = next((t for t in texts if _BAD_VALUE.search(t)), None)
    if bad is not None:
        return "data-format-error", f"near {name}: {_BAD_VALUE.search(bad).group(0)!r} in {bad[:60]!r}"
    if reference and reference.get("target"):
        theirs, ours = reference["target"], target
        for field in ("text", "label", "selected_text"):
            if theirs.get("selector") == ours["selector"] and (theirs.get(field) or "") != (ours.get(field) or "") \
                    and theirs.get(field) and ours.get(field):
                return "content-error", f"{name} reads {ours[field][:40]!r}; the defect-free version {theirs[field][:40]!r}"
    return _against_peers(target, before.get("peers") or [], name)


def _against_peers(target: dict, peers: list[dict], name: str) -> tuple[str | None, str]:
    if len(peers) < 2:
        return None, "no rule fired"
    if target.get("clipped"):
        return "inconsistent-size", f"{name}'s text is cut off"
    common = _agreeing([_rgb(p["background"]) for p in peers], lambda a, b: math.dist(a, b) < 20)
    # a control in another state than its kind (the lit step, the active tab) looks different on purpose
    in_its_own_state = target.get("active") and not any(p.get("active") for p in peers)
    if common is not None and not in_its_own_state and math.dist(_rgb(target["background"]), common) > 60:
        return "inconsistent-colour", f"{name} is {target['background']}; {len(peers)} of its kind are {_css(common)}"
    common = _agreeing([_rgb(p["color"]) for p in peers], lambda a, b: math.dist(a, b) < 20)
    if common is not None and math.dist(_rgb(target["color"]), common) > 100:
        return "inconsistent-colour", f"{name}'s text is {target['color']}; its kind's is {_css(common)}"
    common = _agreeing([p["box"]["height"] for p in peers], lambda a, b: abs(a - b) <= 0.1 * max(a, b, 1))
    if common is not None and abs(target["box"]["height"] - common) > 0.25 * common:
        return "inconsistent-size", f"{name} is {target['box']['height']:.0f} px high; its kind {common:.0f} px"
    common = _agreeing([p["font_size"] for p in peers], lambda a, b: abs(a - b) < 0.5)
    if common is not None and abs(target["font_size"] - common) > 0.2 * common:
        return "inconsistent-size", f"{name}'s font is {target['font_size']:.0f} px; its kind's {common:.0f} px"
    for side, index in (("top", 0), ("right", 1), ("bottom", 2), ("left", 3)):
        common = _agreeing([p["margins"][index] for p in peers], lambda a, b: abs(a - b) < 1)
        if common is not None and abs(target["margins"][index] - common) > 8:
            return "uneven-spacing", f"{name}'s {side} margin is {target['margins'][index]:.0f} px; its kind's {common:.0f} px"
    for axis, label in (("y", "top"), ("x", "left")):
        common = _agreeing([p["box"][axis] for p in peers], lambda a, b: abs(a - b) <= 1)
        if common is not None and 3 <= abs(target["box"][axis] - common) <= 60:
            return "misalignment", f"{name}'s {label} is at {target['box'][axis]:.0f} px; its kind's line at {common:.0f} px"
    return None, "no rule fired"


def _agreeing(values: list, same) -> Any:
    """The value at least two items and most items share (under `same`), or None."""
    scored = [(sum(1 for other in values if same(value, other)), value) for value in values]
    count, best = max(scored, key=itemgetter(0), default=(0, None))  # the first of the most agreed-on
    return best if count >= 2 and count * 2 > len(values) else None


def _rgb(text: str | None) -> tuple[float, float, float]:
    numbers = [float(n) for n in re.findall(r"[\d.]+", text or "")[:4]]
    if len(numbers) < 3 or (len(numbers) == 4 and numbers[3] == 0):
        return (255.0, 255.0, 255.0)  # transparent: the page behind, taken as white
    return numbers[0], numbers[1], numbers[2]


def _css(colour: tuple) -> str:
    return "rgb({:.0f}, {:.0f}, {:.0f})".format(*colour)
