"""Waiting for the page to settle after an action: by events, never by fixed sleeps.

Settled means: an animation frame has passed, no finite animation or transition is running,
and — if the DOM changed or something scrolled since the action started — the page has been
quiet for `quiet_ms`; or `cap_ms` has passed, whichever comes first. A page where nothing
happened settles in one frame. Runs in the harness's isolated world (see `cua._harness_js`)
so the app cannot disturb the measurement.
"""

from __future__ import annotations

from playwright.async_api import Page

from ._harness_js import harness_call
from ._isolated import JavaScriptError, JavaScriptTimeout, isolated_world

DEFAULT_QUIET_MS = 40
DEFAULT_CAP_MS = 800


async def settle(page: Page, quiet_ms: int = DEFAULT_QUIET_MS, cap_ms: int = DEFAULT_CAP_MS) -> dict:
    """Wait until the page is settled.

    Returns {"ms", "mutations", "capped"}, or {"error"} if the page never answered (hung main
    thread, crashed renderer) — settling never raises.
    """
    try:
        result = await isolated_world(page).evaluate(
            harness_call(f"aui.settle({int(quiet_ms)}, {int(cap_ms)})"), timeout_ms=cap_ms + 1_000
        )
        return result or {"ms": None, "mutations": 0, "capped": False}
    except (JavaScriptError, JavaScriptTimeout) as exc:
        return {"error": str(exc)}
    except Exception as exc:  # the page or its CDP session is gone
        return {"error": f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"}
