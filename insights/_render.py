"""Versions as the agent meets them: the DOM after load, in Chromium.

An offline revision adds much of its help at run time (a typed companion beside every slider, the
status log), and a model coder may too; the HTML file alone would say such a change never happened.
So both versions of a revision are loaded the way a rollout loads them (same viewport, seed 0, the
fixed clock) and their settled DOM is what `insights._dom` compares.
"""

from __future__ import annotations

import hashlib

from cua import BrowserConfig, Viewport, open_app, settle


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
