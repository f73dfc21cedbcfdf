"""Waiting for the page to settle after an action: by events, never by fixed sleeps.

Settled means: two animation frames have passed, no finite animation or transition is running,
if the DOM changed or something scrolled since the action started the page has been quiet for
`quiet_ms`, and nothing that moves has moved for `quiet_ms` either: the scroll positions of the
window and of every element that has scrolled, and the box of the element the action aimed at
(sampled once a frame). A smooth scroll (`scroll-behavior: smooth`, `scrollIntoView({behavior:
'smooth'})`) or a transition that moves the next target is thus waited out, so the next click
lands where the screenshot shows it. A page where nothing happened settles in two frames (a
smooth scroll may show its first movement only in the second).

Caps: `cap_ms` (default 800) while only the DOM changes or animations run elsewhere; once a
scroll position or the target moved or animated, `motion_cap_ms` (default 2500: a smooth scroll
across a long page takes about 1.2 s in Chromium, and a 600 ms transition may follow it). Both
are also cut to what is left of the step's time (`AppEnv`). An infinite animation never holds a
step: it is not waited for, and the target's box is not watched while one may move it (one on the
target or an ancestor, or one anywhere that animates a layout property, e.g. a pulsing height
above the target; paint-only ones — transforms, opacity, colours — move no other element). Runs in the harness's isolated
world (`cua/_harness.js`) so the app cannot disturb the measurement. `settle` reports what it
waited for (`waitedFor`: dom, scroll, target, target animation, animation) and until when the
page moved (`motionMs`); the environment records both in the step's timings.

To save a step's worth of waiting, the rollout observes the page (screenshot, fingerprint,
checker) *while* it settles: `start_settling` notes, in one round trip, everything that has
happened so far, and whether a finite animation already runs (then none is taken early: it could
not stand — on four bundled apps' reference solutions, 76 of 146 steps had taken one in vain);
`settle` then reports in `late` how many changes came after that note and in
`busy` whether an animation was seen (a frame in which something moved counts as a change). When
neither, the page the observation saw is the settled page, so it stands; otherwise the rollout
observes again after settling (`is_quiet_since_start`).
"""

from __future__ import annotations

from playwright.async_api import Page

from ._harness import call_harness
from ._isolated import JavaScriptError, JavaScriptTimeout

DEFAULT_QUIET_MS = 40
DEFAULT_CAP_MS = 800
DEFAULT_MOTION_CAP_MS = 2500


async def start_settling(page: Page) -> bool:
    """Mark "the action's own effects end here" for the next `settle`. True if an observation taken now may
    stand; False if the page did not answer, or if a finite animation (a transition the action started)
    runs now: `settle` will report it `busy`, and that observation would only be taken again."""
    try:
        started = await call_harness(page, "settleStart", timeout_ms=2_000)
    except Exception:
        return False
    return isinstance(started, dict) and started.get("busy") is False


def is_quiet_since_start(settled: dict) -> bool:
    """Did nothing change, scroll or animate between `start_settling` and the end of `settle`?"""
    return "error" not in settled and not settled.get("capped") and settled.get("late") == 0 and settled.get("busy") is False


async def settle(
    page: Page, quiet_ms: int = DEFAULT_QUIET_MS, cap_ms: int = DEFAULT_CAP_MS, motion_cap_ms: int | None = None
) -> dict:
    """Wait until the page is settled; `motion_cap_ms` (None: `cap_ms`) caps the wait once something moved.

    Returns {"ms", "mutations", "capped", "late", "busy", "motionMs", "waitedFor"}, or {"error"} if the
    page never answered (hung main thread, crashed renderer) — settling never raises.
    """
    motion_cap_ms = cap_ms if motion_cap_ms is None else max(cap_ms, motion_cap_ms)
    try:
        result = await call_harness(
            page, "settle", int(quiet_ms), int(cap_ms), int(motion_cap_ms), timeout_ms=motion_cap_ms + 1_000
        )
        return result or {"ms": None, "mutations": 0, "capped": False}
    except (JavaScriptError, JavaScriptTimeout) as exc:
        return {"error": str(exc)}
    except Exception as exc:  # the page or its CDP session is gone
        return {"error": f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"}
