"""The harness's JavaScript (`_harness.js`), installed once per isolated world (see `cua._isolated`).

`globalThis.__aui` lives in the harness world only — the app cannot see or replace it — and
holds a MutationObserver and a scroll listener that run for the page's whole life, so settling
and change detection can ask "did anything happen since the action started?" instead of
watching from the moment they are called (a click's synchronous effects are over by then).

A call first asks the world's installed harness by name (a few dozen bytes); only a world that has
none yet (a new page, or one the page's navigation replaced) is sent the whole source (13 kB), once.
A step makes four or five harness calls: sending the source with each was most of what the harness
cost in the pipes between Python, Playwright's driver and Chromium.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from playwright.async_api import Page

from ._isolated import isolated_world

HARNESS = Path(__file__).with_name("_harness.js").read_text(encoding="utf-8")


async def call_harness(page: Page, method: str, *args: Any, timeout_ms: int) -> Any:
    """`__aui[method](*args)` in the page's harness world (installed on first use), arguments as JSON.

    Raises:
        JavaScriptError: the method threw (or there is no such method).
        JavaScriptTimeout: no answer within `timeout_ms`.
    """
    world = isolated_world(page)
    rendered = ", ".join(json.dumps(a) for a in [method, *args])
    # `{v: …}` when the harness is there (a method may answer undefined), null when it is not.
    installed = await world.evaluate(
        f"(async (m, ...a) => globalThis.__aui ? {{v: await globalThis.__aui[m](...a)}} : null)({rendered})",
        timeout_ms=timeout_ms)
    if isinstance(installed, dict):
        return installed.get("v")
    return await world.call(HARNESS, method, *args, timeout_ms=timeout_ms)
