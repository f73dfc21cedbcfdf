"""Versions as the agent meets them: the DOM after load, in Chromium.

An offline revision adds much of its help at run time (a typed companion beside every slider, the
status log), and a model coder may too; the HTML file alone would say such a change never happened.
So both versions of a revision are loaded the way a rollout loads them (same viewport, seed 0, the
fixed clock) and their settled DOM is what `insights._dom` compares.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from playwright.async_api import Error as PlaywrightError

from cua import BrowserConfig, Viewport, open_app, settle

CROP_TIMEOUT_MS = 3_000


class Renderer:
    """Loads each distinct version once (by its content's sha256) and keeps its settled DOM."""

    def __init__(self, viewport: Viewport) -> None:
        self.viewport = viewport
        self._seen: dict[str, str] = {}

    async def dom(self, html: str) -> str:
        key = hashlib.sha256(html.encode()).hexdigest()
        if key not in self._seen:
            async with open_app(html, BrowserConfig(viewport=self.viewport), seed=0, fixed_clock=True) as loaded:
                await settle(loaded.page)
                self._seen[key] = await loaded.page.content()
        return self._seen[key]

    async def crops(self, html: str, selectors: list[str], out: dict[str, Path]) -> dict[str, bool]:
        """A PNG of each element (its first match, scrolled into view) at `out[selector]`, from one load of `html`;
        whether each was found and drawn."""
        drawn: dict[str, bool] = {}
        async with open_app(html, BrowserConfig(viewport=self.viewport), seed=0, fixed_clock=True) as loaded:
            await settle(loaded.page)
            for selector in selectors:
                try:
                    locator = loaded.page.locator(selector).first
                    if not await locator.count() or not await locator.is_visible():
                        drawn[selector] = False
                        continue
                    out[selector].parent.mkdir(parents=True, exist_ok=True)
                    await locator.screenshot(path=str(out[selector]), timeout=CROP_TIMEOUT_MS, animations="disabled")
                    drawn[selector] = True
                except PlaywrightError:
                    drawn[selector] = False  # a selector Playwright cannot use, or an element that never settles
        return drawn
