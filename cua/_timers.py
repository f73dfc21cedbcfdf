"""Waiting out an app's own short timers, for rollouts that must repeat (`BrowserConfig.short_timers_ms`).

What a click does can hang on a timer the app set a moment before: a memory game locks its board
for a second after an unmatched pair, and a click inside the lock does nothing. An agent's steps
take as long as they take, so two rollouts of the same actions can differ by the machine's speed.
With `short_timers_ms` set, the page counts its pending `setTimeout`s of at most that many ms
(`_short_timers.js`, installed before the app's scripts) and the environment, once a step's page has
settled, waits until none is pending (capped) and lets it settle again before observing — so each
observation shows the action's delayed effects too (the cards turned back), and the next action
meets the app at rest. Off by default: an agent sees the page as a person would, right after acting.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from playwright.async_api import Page

TIMERS_GRACE_MS = 500
"""Beyond `short_timers_ms`, how long to wait for the app's timers (one set just before it fired)."""

_SHORT_TIMERS = Path(__file__).with_name("_short_timers.js").read_text(encoding="utf-8")
_DRAIN = "(capMs) => { const timers = window[Symbol.for('aui.shortTimers')]; " \
         "return timers ? timers.drain(capMs) : {had: 0, waitedMs: 0, pending: 0}; }"


def short_timers_script(limit_ms: int) -> str:
    """The init script that counts the page's pending timers of at most `limit_ms`."""
    return f"({_SHORT_TIMERS})({int(limit_ms)})"


async def wait_for_short_timers(page: Page, cap_ms: int) -> dict:
    """Wait until the page has no short timer pending, or `cap_ms`; {"had", "waitedMs", "pending"}
    (pending when called, the wait, left at the cap), or {"error"} if the page did not answer. Never raises."""
    try:
        return await asyncio.wait_for(page.evaluate(_DRAIN, max(0, int(cap_ms))), cap_ms / 1000 + 2)
    except asyncio.TimeoutError:
        return {"error": f"the page did not answer within {cap_ms / 1000 + 2:g} s"}
    except Exception as exc:  # the page navigated, hung or closed mid-wait
        return {"error": f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"}
