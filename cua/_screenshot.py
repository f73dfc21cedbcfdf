"""Viewport screenshots, taken once per step, as fast as Chromium can encode them.

Chromium's CDP capture with `optimizeForSpeed` encodes a 1280×720 PNG in about a third of the
time `page.screenshot` takes (which also re-checks fonts and layout); the files are somewhat
larger. Playwright's screenshot is the fallback if the CDP call fails.
"""

from __future__ import annotations

import asyncio
import base64

from playwright.async_api import Page

from ._isolated import isolated_world

SCREENSHOT_TIMEOUT_S = 10.0


class ScreenshotTimeout(RuntimeError):
    """The page produced no frame in time (a hung renderer). Not a `TimeoutError`, so that callers
    bounding a larger piece of work with `asyncio.wait_for` can tell it from their own limit."""


async def capture_png(page: Page, timeout_s: float = SCREENSHOT_TIMEOUT_S) -> bytes:
    """A PNG of the viewport.

    Raises:
        ScreenshotTimeout: the page produced no frame within `timeout_s` (hung renderer).
        playwright Error: the page is closed or crashed.
    """
    try:
        cdp = await isolated_world(page).cdp_session()
        reply = await asyncio.wait_for(
            cdp.send("Page.captureScreenshot", {"format": "png", "optimizeForSpeed": True}), timeout_s
        )
        return base64.b64decode(reply["data"])
    except asyncio.TimeoutError:
        raise ScreenshotTimeout(f"no screenshot within {timeout_s:g} s (page hung)") from None
    except Exception:
        if page.is_closed():
            raise
    return await page.screenshot(type="png", timeout=timeout_s * 1000)
