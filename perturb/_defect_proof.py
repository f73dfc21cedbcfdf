"""Proving an injected defect on the page: it does what its kind promises, or it is dropped with the reason.

- A **display** defect changes the pixels of the bound element's region while the task still
  works: the reference solution is replayed up to the bound step on the defect-free app and on the
  defect app (each loaded fresh, the same way), both scrolled alike, and the region around the
  bound element (its box on either page, padded) is compared pixel by pixel — it must differ,
  while the defect-free page's region must hold still between two screenshots (else a timer or an
  animation, not the defect, could be what changed). Then the rest of the reference solution,
  replayed on that defect page with the verifier's replay, must still make the checker true.
- An **interaction** defect breaks the task: on the defect app the checker is still false at load
  (the verifier's gate), and the reference solution, replayed settling after every step (the
  verifier's careful replay, so a slow page is not mistaken for a defect), fails at a step or
  leaves the checker not true.

Both start from a task whose reference solution is proven on the defect-free app (the caller's
`clean_proven`); anything else is dropped, as is a defect whose bound element was never marked.
Reasons are worded from what was seen, without timings, so a defect set is the same file each run.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from PIL import Image, ImageChops
from playwright.async_api import Page
from pydantic import BaseModel, Field

from apps_prompts import SolutionStep
from cua import DEFECT_PREFIX, INJECTED_ATTRIBUTE, BrowserConfig, isolated_world, open_app, settle
from verifier import CompiledChecker, compile_checker, gate_checker, replay_solution, run_checker

from ._defects import DefectSpec, defect_transform

REGION_PADDING_PX = 24
PIXEL_TOLERANCE = 24  # a channel differing by less is anti-aliasing, not a defect
MIN_CHANGED_PIXELS = 20

DefectStatus = Literal["proven", "dropped"]


class DefectProof(BaseModel):
    """What the page showed about one injected defect."""

    status: DefectStatus
    reason: str
    region: dict[str, int] | None = Field(default=None, description="Display: the compared region (viewport pixels).")
    failed_step: int | None = Field(default=None, description="Interaction: the reference solution step that failed.")

    @property
    def proven(self) -> bool:
        return self.status == "proven"


def dropped(reason: str, **fields) -> DefectProof:
    return DefectProof(status="dropped", reason=reason, **fields)


async def prove_defect(html: str, checker: str, solution: Sequence[SolutionStep], step: int, spec: DefectSpec, *,
                       clean_proven: bool, config: BrowserConfig | None = None) -> DefectProof:
    """Show on the page that `spec`, bound to solution step `step` (1-based), is what its kind says.

    Never raises for what the app or the defect does; raises only what the browser raises.
    """
    if not clean_proven:
        return dropped("the task's reference solution does not pass on the defect-free app: nothing to compare with")
    try:
        compiled = compile_checker(checker)
    except ValueError as exc:  # RuleSyntaxError is one
        return dropped(f"the task's checker does not compile: {exc}")
    config = config or BrowserConfig()
    defective = config.model_copy(update={"transform": defect_transform(spec)})
    if spec.kind == "display":
        return await _prove_display(html, compiled, list(solution), step, spec, config, defective)
    return await _prove_interaction(html, compiled, list(solution), spec, defective)


async def _prove_interaction(html: str, checker: CompiledChecker, solution: list[SolutionStep], spec: DefectSpec,
                             defective: BrowserConfig) -> DefectProof:
    async with open_app(html, defective) as broken:
        if (failed := _transform_failed(broken.events.page_errors)) is not None:
            return dropped(failed)
        await settle(broken.page)
        gate = await gate_checker(broken.page, checker)
        if not gate.accepted:
            return dropped(f"the checker does not pass the gate on the defect app: {gate.reason}")
        failure = await replay_solution(broken.page, solution)
        if failure is not None:
            return DefectProof(status="proven", failed_step=failure.number,
                               reason=f"the reference solution fails on the defect app at step {failure.number} "
                                      f"({failure.step.action} {failure.step.selector})")
        await settle(broken.page)
        outcome = await run_checker(broken.page, checker.javascript)
    if outcome.passed:
        return dropped(f"not observable: the reference solution still passes with the {spec.type} defect")
    return DefectProof(status="proven", reason="after the reference solution on the defect app the checker is not true "
                       "(it is on the defect-free app)")


async def _prove_display(html: str, checker: CompiledChecker, solution: list[SolutionStep], step: int,
                         spec: DefectSpec, clean: BrowserConfig, defective: BrowserConfig) -> DefectProof:
    prefix, rest = solution[: step - 1], solution[step - 1:]
    async with open_app(html, clean) as app:
        if (failed := await _reach(app.page, prefix)) is not None:
            return dropped(f"the defect-free app: {failed}")
        scroll_y = await _probe(app.page, "centre", spec.selector)
        await settle(app.page)  # what scrolling in reveals (reveal-on-scroll transitions) is waited out
        clean_box = await _box(app.page, spec.selector)
        async with open_app(html, defective) as broken:
            if (failed := _transform_failed(broken.events.page_errors)) is not None:
                return dropped(failed)
            if (failed := await _reach(broken.page, prefix)) is not None:
                return dropped(f"the defect app: {failed} (a display defect must not change what the app does)")
            await _probe(broken.page, "scroll", spec.selector, scroll_y)
            await settle(broken.page)
            if await _probe(broken.page, "marker", spec.selector) != f"{DEFECT_PREFIX}{spec.type}":
                return dropped(f"the bound element {spec.selector} was not on the defect app when step {step} acts on it")
            region = _region(clean_box, await _box(broken.page, spec.selector), clean.viewport.width,
                             clean.viewport.height)
            if region is None:
                return dropped(f"the bound element {spec.selector} is not visible within the viewport at step {step}")
            before, after = await _shot(app.page, region), await _shot(broken.page, region)
            again = await _shot(app.page, region)
            if _changed(before, again) >= MIN_CHANGED_PIXELS:
                return dropped("the region changes by itself on the defect-free app (a timer or an animation)",
                               region=region)
            if _changed(before, after) < MIN_CHANGED_PIXELS:
                return dropped(f"not observable: the {spec.type} defect leaves the bound element's region as it was",
                               region=region)
            # The rest of the reference solution, on the same defect page: the task must still pass.
            failure = await replay_solution(broken.page, rest)
            if failure is not None:
                return dropped(f"the task no longer passes on the defect app (a display defect must keep it working): "
                               f"solution step {step - 1 + failure.number} ({failure.step.action} "
                               f"{failure.step.selector}) failed", region=region)
            await settle(broken.page)
            outcome = await run_checker(broken.page, checker.javascript)
    if not outcome.passed:
        return dropped("the task no longer passes on the defect app (a display defect must keep it working): the "
                       "checker is not true after the reference solution", region=region)
    return DefectProof(status="proven", region=region,
                       reason="the bound element's region looks different and the reference solution still passes")


def _transform_failed(page_errors: list[str]) -> str | None:
    failures = [error for error in page_errors if error.startswith("transform ")]
    return f"the defect did not apply: {failures[0]}" if failures else None


_PROBE_JS = Path(__file__).with_name("_defect_probe.js").read_text(encoding="utf-8")


async def _probe(page: Page, what: str, selector: str, y: float = 0) -> object:
    return await isolated_world(page).call(_PROBE_JS, what, selector, INJECTED_ATTRIBUTE, y)


async def _reach(page: Page, prefix: list[SolutionStep]) -> str | None:
    """Replay the steps before the bound one and let the page settle; what failed, or None."""
    await settle(page)
    failure = await replay_solution(page, prefix)
    if failure is not None:
        return f"replaying the steps before the bound one: solution step {failure.number} ({failure.step.action} " \
               f"{failure.step.selector}) failed"
    await settle(page)
    return None


async def _box(page: Page, selector: str) -> dict[str, float] | None:
    try:
        return await page.locator(selector).first.bounding_box(timeout=2_000)
    except Exception:  # gone, detached: no box to compare
        return None


def _region(first: dict | None, second: dict | None, width: int, height: int) -> dict[str, int] | None:
    """The union of both boxes, padded, clipped to the viewport (None: nothing of it on screen)."""
    boxes = [b for b in (first, second) if b and b["width"] > 0 and b["height"] > 0]
    if not boxes:
        return None
    left = max(0, int(min(b["x"] for b in boxes)) - REGION_PADDING_PX)
    top = max(0, int(min(b["y"] for b in boxes)) - REGION_PADDING_PX)
    right = min(width, int(max(b["x"] + b["width"] for b in boxes)) + REGION_PADDING_PX + 1)
    bottom = min(height, int(max(b["y"] + b["height"] for b in boxes)) + REGION_PADDING_PX + 1)
    if right - left < 2 or bottom - top < 2:
        return None
    return {"x": left, "y": top, "width": right - left, "height": bottom - top}


async def _shot(page: Page, region: dict[str, int]) -> Image.Image:
    png = await page.screenshot(clip=region, animations="disabled", caret="hide")
    return Image.open(io.BytesIO(png)).convert("RGB")


def _changed(first: Image.Image, second: Image.Image) -> int:
    """Pixels differing by more than PIXEL_TOLERANCE in some channel (0 for identical images)."""
    if first.size != second.size:
        return first.size[0] * first.size[1]
    red, green, blue = ImageChops.difference(first, second).split()
    largest = ImageChops.lighter(ImageChops.lighter(red, green), blue)  # the largest channel difference per pixel
    return sum(largest.histogram()[PIXEL_TOLERANCE + 1:])
