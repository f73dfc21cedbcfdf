"""The one coordinate executor: every agent action becomes `page.mouse` / `page.keyboard` input.

Never selectors — the agent must hit what it sees. Before acting, the element under the pointer
(or the focused element, for keyboard actions) is recorded through the harness's isolated world,
together with a fingerprint of the page state, so the rollout can tell whether the step changed
anything.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass

from playwright.async_api import Page

from ._actions import Action
from ._harness import call_harness
from ._isolated import JavaScriptError, JavaScriptTimeout
from ._trajectory import Box, ElementInfo

DEFAULT_SCROLL_PX = 400
DRAG_STEPS = 12
# `wait`: the official UI-TARS prompt's "wait() #Sleep for 5s and take a screenshot to check for any
# changes". Up to 5 s, ending early at the first DOM change or scroll (the page then settles as after
# any action), so a still page is watched for the whole 5 s and a changing one costs no more than it
# needs. `AppEnv.step` cuts it to what is left of the step's time limit (`RolloutConfig.step_timeout_s`).
WAIT_CAP_MS = 5_000
SCROLL_LANDING_CAP_MS = 250
PROBE_TIMEOUT_MS = 1_500

_KEY_NAMES = {
    "ctrl": "Control", "control": "Control", "cmd": "Meta", "command": "Meta", "meta": "Meta", "win": "Meta",
    "super": "Meta", "alt": "Alt", "option": "Alt", "shift": "Shift", "enter": "Enter", "return": "Enter",
    "esc": "Escape", "escape": "Escape", "tab": "Tab", "space": "Space", "backspace": "Backspace",
    "delete": "Delete", "del": "Delete", "insert": "Insert", "home": "Home", "end": "End",
    "pageup": "PageUp", "pagedown": "PageDown", "page_up": "PageUp", "page_down": "PageDown",
    "up": "ArrowUp", "down": "ArrowDown", "left": "ArrowLeft", "right": "ArrowRight",
    "arrowup": "ArrowUp", "arrowdown": "ArrowDown", "arrowleft": "ArrowLeft", "arrowright": "ArrowRight",
    "capslock": "CapsLock", "plus": "+", "minus": "-",
}
_SCROLL_VECTORS = {"down": (0, 1), "up": (0, -1), "right": (1, 0), "left": (-1, 0)}


class UnknownKeyError(ValueError):
    """A hotkey names a key Playwright does not know."""


def normalize_key(name: str) -> str:
    """A model's key name ('ctrl', 'Return', 'pagedown', 'F5', 'a') as Playwright's key name.

    Raises:
        UnknownKeyError: not a known key name and not a single character.
    """
    stripped = name.strip()
    lowered = stripped.lower()
    if lowered in _KEY_NAMES:
        return _KEY_NAMES[lowered]
    if re.fullmatch(r"f([1-9]|1[0-2])", lowered):
        return lowered.upper()
    if len(stripped) == 1:
        return stripped.lower() if stripped.isalpha() else stripped
    if stripped[:1].isupper() and stripped.isalpha():
        return stripped  # already Playwright style ("Enter", "Escape", "PageDown", ...)
    raise UnknownKeyError(f"unknown key {name!r}; use names like ctrl, shift, enter, esc, tab, pagedown, f5 or a letter")


def key_combination(keys: list[str]) -> str:
    """Keys held together, in Playwright's `Control+Shift+a` form."""
    return "+".join(normalize_key(k) for k in keys)


@dataclass
class ExecutionResult:
    target: ElementInfo | None = None
    fingerprint_before: str | None = None
    execute_ms: float = 0.0
    error: str | None = None
    note: str | None = None  # what a `wait` saw: a change after N ms, or none within its cap


async def probe(page: Page, x: float | None, y: float | None) -> tuple[ElementInfo | None, str | None]:
    """The element at (x, y) (the focused one when x is None) and the page-state fingerprint.

    Also marks "the action starts now" for `settle`. Returns (None, None) if the page does not answer.
    """
    try:
        result = await call_harness(page, "probe", x, y, timeout_ms=PROBE_TIMEOUT_MS)
    except (JavaScriptError, JavaScriptTimeout):
        return None, None
    if not isinstance(result, dict):
        return None, None
    target, info = result.get("target"), None
    if isinstance(target, dict):
        box = target.get("box")
        info = ElementInfo(
            tag=target.get("tag") or "?",
            id=target.get("id"),
            text=target.get("text") or "",
            box=Box(**box) if isinstance(box, dict) else None,
            selector=target.get("selector"),
            injected=target.get("injected"),
        )
    return info, result.get("fingerprint")


async def page_fingerprint(page: Page) -> str | None:
    """A hash of the DOM plus form values, focus and scroll offsets; None if the page does not answer."""
    try:
        return await call_harness(page, "fingerprint", timeout_ms=PROBE_TIMEOUT_MS)
    except (JavaScriptError, JavaScriptTimeout):
        return None


async def execute(page: Page, action: Action, *, default_scroll_px: int = DEFAULT_SCROLL_PX,
                  wait_cap_ms: int = WAIT_CAP_MS) -> ExecutionResult:
    """Perform `action` (in viewport pixels) on `page`; input errors become `error`, never raised.

    `wait` watches the page for up to `wait_cap_ms` and ends at its first change (`WAIT_CAP_MS`).

    Playwright errors from a closed or crashed page are re-raised: the rollout decides what a dead
    page means.
    """
    started = time.perf_counter()
    point = action.point
    if action.kind in ("type", "hotkey"):
        target, fingerprint = await probe(page, None, None)
    elif point is not None:
        target, fingerprint = await probe(page, point.x, point.y)
    else:
        target, fingerprint = None, await page_fingerprint(page)
    result = ExecutionResult(target=target, fingerprint_before=fingerprint)
    mouse, keyboard = page.mouse, page.keyboard
    try:
        match action.kind:
            case "click":
                await mouse.click(point.x, point.y)
            case "left_double":
                await mouse.dblclick(point.x, point.y)
            case "right_single":
                await mouse.click(point.x, point.y, button="right")
            case "move":
                await mouse.move(point.x, point.y)
            case "drag":
                await _drag(page, action)
            case "scroll":
                await _scroll(page, action, default_scroll_px)
            case "hotkey":
                await keyboard.press(key_combination(action.keys))
            case "type":
                await _type(page, action.text or "")
            case "wait":
                waited = await _wait_for_change(page, max(0, int(wait_cap_ms)))
                if waited is not None:
                    result.note = (f"wait: the page changed after {waited['ms']:.0f} ms" if waited.get("changed")
                                   else f"wait: no change in {waited['ms']:.0f} ms")
    except UnknownKeyError as exc:
        result.error = str(exc)
    except Exception as exc:
        if page.is_closed():
            raise
        result.error = f"{action.kind} failed: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
    result.execute_ms = round((time.perf_counter() - started) * 1000, 2)
    return result


async def _drag(page: Page, action: Action) -> None:
    start, end = action.point, action.end
    mouse = page.mouse
    await mouse.move(start.x, start.y)
    await mouse.down()
    # A first small move crosses the browser's drag threshold before the long move, like a hand.
    nudge_x = start.x + (4 if end.x >= start.x else -4)
    await mouse.move(nudge_x, start.y)
    await mouse.move(end.x, end.y, steps=DRAG_STEPS)
    await mouse.up()


async def _scroll(page: Page, action: Action, default_px: int) -> None:
    dx, dy = _SCROLL_VECTORS[action.direction or "down"]
    amount = action.amount if action.amount is not None else default_px
    await page.mouse.move(action.point.x, action.point.y)
    await page.mouse.wheel(dx * amount, dy * amount)
    # The wheel call returns before the page scrolls; wait for the scroll (or a handler's change).
    await _wait_for_change(page, SCROLL_LANDING_CAP_MS)


async def _type(page: Page, text: str) -> None:
    body = text.removesuffix("\n")
    if body:
        await page.keyboard.type(body)
    if body != text:  # a trailing newline submits
        await page.keyboard.press("Enter")


async def _wait_for_change(page: Page, cap_ms: int) -> dict | None:
    """{"changed", "ms"}: whether the DOM changed or something scrolled within `cap_ms`; None if the page did not answer."""
    try:
        return await call_harness(page, "waitForChange", int(cap_ms), timeout_ms=cap_ms + 1_000)
    except (JavaScriptError, JavaScriptTimeout):
        return None
