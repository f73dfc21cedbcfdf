"""JavaScript in an isolated world of the page: the app's DOM is visible, its globals are not.

The harness's own scripts (settling, element lookup, checkers) run here so an app that
redefines `MutationObserver`, `JSON` or `window.appState` cannot fool or break them. Chromium
gives this through CDP (`Page.createIsolatedWorld`); the world dies on navigation and is made
again on demand.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

from playwright.async_api import CDPSession, Page

WORLD_NAME = "aui-harness"


class JavaScriptError(RuntimeError):
    """The script threw; the message is the JS exception's description."""


class JavaScriptTimeout(TimeoutError):
    """The script (or the page's main thread) did not finish within its limit."""


class IsolatedWorld:
    """Evaluates expressions in a harness-only JS world of a page's main frame."""

    def __init__(self, page: Page):
        self.page = page
        self._cdp: CDPSession | None = None
        self._context_id: int | None = None

    async def evaluate(self, expression: str, timeout_ms: int = 2_000) -> Any:
        """Evaluate `expression` (awaiting a promise result) and return its JSON value.

        Raises JavaScriptError if it throws, JavaScriptTimeout past `timeout_ms` — V8 terminates
        a runaway script at the limit; a page whose main thread is stuck is given up on a bit later.
        """
        for attempt in range(2):
            context_id = await self._ensure_context()
            params = {
                "expression": expression,
                "contextId": context_id,
                "returnByValue": True,
                "awaitPromise": True,
                "timeout": timeout_ms,
            }
            started = time.monotonic()
            try:
                reply = await asyncio.wait_for(self._cdp.send("Runtime.evaluate", params), timeout_ms / 1000 + 1.0)
            except asyncio.TimeoutError as exc:
                raise JavaScriptTimeout(f"no answer within {timeout_ms} ms (page busy or hung)") from exc
            except Exception as exc:
                # V8's termination at `timeout` surfaces as a bare "Internal error" from CDP.
                if (time.monotonic() - started) * 1000 >= timeout_ms * 0.9:
                    raise JavaScriptTimeout(f"script ran past {timeout_ms} ms and was terminated") from exc
                if attempt == 0 and "context" in str(exc).lower():
                    self._context_id = None  # the page navigated: make the world again
                    continue
                raise JavaScriptError(str(exc).splitlines()[0]) from exc
            details = reply.get("exceptionDetails")
            if details:
                description = (details.get("exception") or {}).get("description") or details.get("text", "error")
                if "terminated" in description.lower() or "Execution was terminated" in details.get("text", ""):
                    raise JavaScriptTimeout(f"script ran past {timeout_ms} ms and was terminated")
                raise JavaScriptError(description.splitlines()[0][:300])
            return reply.get("result", {}).get("value")
        raise JavaScriptError("the page's execution context kept disappearing")

    async def call(self, function_source: str, *args: Any, timeout_ms: int = 2_000) -> Any:
        """Call a JS function (given as source) with JSON-serialisable arguments."""
        rendered = ", ".join(json.dumps(a) for a in args)
        return await self.evaluate(f"({function_source})({rendered})", timeout_ms=timeout_ms)

    async def cdp_session(self) -> CDPSession:
        """The page's CDP session (shared by the harness: screenshots, the isolated world)."""
        if self._cdp is None:
            self._cdp = await self.page.context.new_cdp_session(self.page)
        return self._cdp

    async def _ensure_context(self) -> int:
        await self.cdp_session()
        if self._context_id is None:
            tree = await self._cdp.send("Page.getFrameTree")
            frame_id = tree["frameTree"]["frame"]["id"]
            world = await self._cdp.send(
                "Page.createIsolatedWorld", {"frameId": frame_id, "worldName": WORLD_NAME, "grantUniveralAccess": False}
            )
            self._context_id = world["executionContextId"]
        return self._context_id

    async def detach(self) -> None:
        if self._cdp is not None:
            try:
                await self._cdp.detach()
            except Exception:
                pass
            self._cdp = None
            self._context_id = None


_worlds: dict[int, IsolatedWorld] = {}


def isolated_world(page: Page) -> IsolatedWorld:
    """The page's harness world (one per page, reused across calls)."""
    world = _worlds.get(id(page))
    if world is None or world.page is not page:
        world = _worlds[id(page)] = IsolatedWorld(page)
        page.once("close", lambda _p: _worlds.pop(id(page), None))
    return world
