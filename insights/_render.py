"""Versions as the agent meets them: the DOM after load, in Chromium.

An offline revision adds much of its help at run time (a typed companion beside every slider, the
status log), and a model coder may too; the HTML file alone would say such a change never happened.
So both versions of a revision are loaded the way a rollout loads them (same viewport, seed 0, the
fixed clock) and their settled DOM is what `insights._dom` compares; from the same load, the computed
style of the elements a revision's page-wide changes are checked on (`insights._page`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from contextlib import suppress
from pathlib import Path

from playwright.async_api import Error as PlaywrightError

from cua import BrowserConfig, Viewport, open_app, settle

from ._dom import Version
from ._page import STYLE_PROPERTIES

CROP_TIMEOUT_MS = 3_000
_COMPUTED_STYLES = Path(__file__).with_name("_computed_styles.js").read_text(encoding="utf-8")


class Renderer:
    """Loads each distinct version once (by its content's sha256) and keeps its settled DOM and the computed style
    of the elements asked for (asked for more later, it loads the version again for those)."""

    def __init__(self, viewport: Viewport) -> None:
        self.viewport = viewport
        self._seen: dict[str, tuple[str, dict[str, dict[str, str]], set[str]]] = {}

    async def version(self, html: str, probes: Iterable[str] = ()) -> Version:
        """`html` as loaded: its settled DOM, and the computed `STYLE_PROPERTIES` of each of `probes` it has."""
        key = hashlib.sha256(html.encode()).hexdigest()
        dom, styles, asked = self._seen.get(key, ("", {}, set()))
        missing = [p for p in dict.fromkeys(probes) if p not in asked]
        if key not in self._seen or missing:
            async with open_app(html, BrowserConfig(viewport=self.viewport), seed=0, fixed_clock=True) as loaded:
                await settle(loaded.page)
                dom = dom or await loaded.page.content()
                styles = {**styles, **await loaded.page.evaluate(_COMPUTED_STYLES, [missing, list(STYLE_PROPERTIES)])}
            self._seen[key] = (dom, styles, asked | set(missing))
        return Version(dom, styles)

    async def crops(self, html: str, selectors: list[str], out: dict[str, Path]) -> dict[str, bool]:
        """A PNG of each element (its first match, scrolled into view) at `out[selector]`, from one load of `html`;
        whether each was found and drawn."""
        drawn: dict[str, bool] = {}
        async with open_app(html, BrowserConfig(viewport=self.viewport), seed=0, fixed_clock=True) as loaded:
            await settle(loaded.page)
            for selector in selectors:
                drawn[selector] = False
                with suppress(PlaywrightError):  # a selector Playwright cannot use, or an element that never settles
                    locator = loaded.page.locator(selector).first
                    if await locator.count() and await locator.is_visible():
                        out[selector].parent.mkdir(parents=True, exist_ok=True)
                        await locator.screenshot(path=str(out[selector]), timeout=CROP_TIMEOUT_MS,
                                                 animations="disabled")
                        drawn[selector] = True
        return drawn
