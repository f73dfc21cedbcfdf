"""JavaScript in an isolated world of the page: the app's DOM is visible, its globals are not.

The harness's own scripts (settling, element lookup) run here so an app that redefines
`MutationObserver`, `JSON` or `window.appState` cannot fool or break them. Chromium gives this
through CDP (`Page.createIsolatedWorld`); the world dies on navigation and is made again on
demand. Untrusted scripts (checkers) get a world of their own per call (`evaluate_in_new_world`),
so they can neither disturb the harness's world nor keep state between calls.
"""

from __future__ import annotations

import asyncio
import itertools
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
        self._frame_id: str | None = None
        self._once = itertools.count(1)

    async def evaluate(self, expression: str, timeout_ms: int = 2_000) -> Any:
        """Evaluate `expression` (awaiting a promise result) and return its JSON value.

        Raises JavaScriptError if it throws, JavaScriptTimeout past `timeout_ms` — V8 terminates
        a runaway script at the limit; a page whose main thread is stuck is given up on a bit later.
        """
        return await self._evaluate(expression, timeout_ms, new_world=False)

    async def evaluate_in_new_world(self, expression: str, timeout_ms: int = 2_000) -> Any:
        """Like `evaluate`, but in a world made for this one call and never used again.

        For untrusted scripts (checkers): whatever they leave on their globals — a flag that
        makes the next call answer differently, a replaced `MutationObserver` — reaches neither
        a later call nor the harness. Costs one extra round trip to the page.
        """
        return await self._evaluate(expression, timeout_ms, new_world=True)

    async def _evaluate(self, expression: str, timeout_ms: int, new_world: bool) -> Any:
        for attempt in range(2):
            started = time.monotonic()
            try:
                # Making the world needs the page's main thread too, so it counts against the limit:
                # on a page hung since load it would otherwise wait forever.
                reply = await asyncio.wait_for(
                    self._send_evaluate(expression, timeout_ms, new_world), timeout_ms / 1000 + 1.0
                )
            except asyncio.TimeoutError as exc:
                raise JavaScriptTimeout(f"no answer within {timeout_ms} ms (page busy or hung)") from exc
            except Exception as exc:
                # V8's termination at `timeout` surfaces as a bare "Internal error" from CDP.
                if (time.monotonic() - started) * 1000 >= timeout_ms * 0.9:
                    raise JavaScriptTimeout(f"script ran past {timeout_ms} ms and was terminated") from exc
                if attempt == 0 and "context" in str(exc).lower():
                    self._context_id = self._frame_id = None  # the page navigated: make the world again
                    continue
                raise JavaScriptError((str(exc).splitlines() or [type(exc).__name__])[0]) from exc
            details = reply.get("exceptionDetails")
            if details:
                description = (details.get("exception") or {}).get("description") or details.get("text", "error")
                if "terminated" in description.lower() or "Execution was terminated" in details.get("text", ""):
                    raise JavaScriptTimeout(f"script ran past {timeout_ms} ms and was terminated")
                raise JavaScriptError(description.splitlines()[0][:300])
            return reply.get("result", {}).get("value")
        raise JavaScriptError("the page's execution context kept disappearing")

    async def _send_evaluate(self, expression: str, timeout_ms: int, new_world: bool = False) -> dict:
        if new_world:
            context_id = await self._create_world(f"{WORLD_NAME}-once-{next(self._once)}")
        else:
            if self._context_id is None:
                self._context_id = await self._create_world(WORLD_NAME)
            context_id = self._context_id
        params = {
            "expression": expression,
            "contextId": context_id,
            "returnByValue": True,
            "awaitPromise": True,
            "timeout": timeout_ms,
        }
        return await self._cdp.send("Runtime.evaluate", params)

    async def call(self, function_source: str, *args: Any, timeout_ms: int = 2_000) -> Any:
        """Call a JS function (given as source) with JSON-serialisable arguments."""
        rendered = ", ".join(json.dumps(a) for a in args)
        return await self.evaluate(f"({function_source})({rendered})", timeout_ms=timeout_ms)

    async def cdp_session(self) -> CDPSession:
        """The page's CDP session (shared by the harness: screenshots, the isolated world)."""
        if self._cdp is None:
            self._cdp = await self.page.context.new_cdp_session(self.page)
        return self._cdp

    async def _create_world(self, name: str) -> int:
        """A world of the main frame; Chromium hands back the same world for a name it has seen."""
        await self.cdp_session()
        if self._frame_id is None:  # the main frame keeps its id across navigations
            tree = await self._cdp.send("Page.getFrameTree")
            self._frame_id = tree["frameTree"]["frame"]["id"]
        world = await self._cdp.send(
            "Page.createIsolatedWorld", {"frameId": self._frame_id, "worldName": name, "grantUniveralAccess": False}
        )
        return world["executionContextId"]

    def forget(self) -> None:
        """The page navigated (a warm page reused for another app): its worlds died with the document."""
        self._context_id = None


_worlds: dict[int, IsolatedWorld] = {}


def isolated_world(page: Page) -> IsolatedWorld:
    """The page's harness world (one per page, reused across calls)."""
    world = _worlds.get(id(page))
    if world is None or world.page is not page:
        world = _worlds[id(page)] = IsolatedWorld(page)
        page.once("close", lambda _p: _worlds.pop(id(page), None))
    return world
