"""The browser environment: one Chromium per process (per event loop), a fresh context per app.

The environment owns the browser (BrowserGym's rule): callers get a page with the app loaded
and never launch or share browsers themselves. The app is served from a local origin by
request interception; every other request is blocked and logged, dialogs are answered and
logged, pop-ups closed and downloads refused, so an untrusted app cannot reach the network or
stall the harness. What interception cannot see (WebRTC's own sockets) is shut by launch
switches, and a renderer's JS heap is capped so a runaway app crashes its own page, not the
worker (`_launch`, which also relaunches a browser that died and kills one that hangs).
"""

from __future__ import annotations

import asyncio
import time
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, AsyncIterator

from playwright.async_api import BrowserContext, Dialog, Page, Route
from pydantic import BaseModel, Field

from ._caller_state import CallerState
from ._isolated import isolated_world
from ._launch import CONTEXT_TIMEOUT_S, BrowserConfig, close_context, new_context
from ._launch import close_browser as _close_browsers
from ._seeding import seeding_script
from ._timers import short_timers_script
from ._transform import PageTransform, serve_html

APP_ORIGIN = "http://aui-app.localhost"
APP_URL = f"{APP_ORIGIN}/index.html"

# Run in the page: the init script of `config.in_page_select_picker`, and the wait for the end of loading.
_IN_PAGE_SELECT_PICKER = Path(__file__).with_name("_in_page_select_picker.js").read_text(encoding="utf-8")
_STILL_ANIMATIONS = Path(__file__).with_name("_still_animations.js").read_text(encoding="utf-8")
_DOCUMENT_COMPLETE = Path(__file__).with_name("_document_complete.js").read_text(encoding="utf-8")

# An app that floods the logs (a request or dialog every tick) must not grow the trajectory
# without bound; past the cap attempts are counted, not listed.
MAX_LOGGED_EVENTS = 300
_LOG_NAMES = ("blocked requests", "dialogs", "page errors")  # the capped logs, in the order of `overflow_notes`


class BlockedRequest(BaseModel):
    url: str
    method: str = "GET"
    resource_type: str = ""
    at_s: float = Field(description="Seconds since the context opened.")


class DialogRecord(BaseModel):
    kind: str
    message: str
    at_s: float


@dataclass
class PageEvents:
    """What the app tried during its life: the harness's log of its side effects."""

    blocked_requests: list[BlockedRequest] = field(default_factory=list)
    dialogs: list[DialogRecord] = field(default_factory=list)
    popups_closed: int = 0
    downloads_refused: int = 0
    page_errors: list[str] = field(default_factory=list)
    crashed: bool = False
    transform_report: Any = None  # what the transform's script returned (e.g. what it changed)
    started: float = field(default_factory=time.monotonic)
    # Attempts beyond MAX_LOGGED_EVENTS, counted but not listed, by log.
    unlisted: dict[str, int] = field(default_factory=lambda: dict.fromkeys(_LOG_NAMES, 0))

    def elapsed(self) -> float:
        return round(time.monotonic() - self.started, 3)

    def _log(self, entries: list, what: str, entry: Any) -> None:
        if len(entries) < MAX_LOGGED_EVENTS:
            entries.append(entry)
        else:
            self.unlisted[what] += 1

    def block(self, request: BlockedRequest) -> None:
        self._log(self.blocked_requests, "blocked requests", request)

    def dialog(self, record: DialogRecord) -> None:
        self._log(self.dialogs, "dialogs", record)

    def page_error(self, text: str) -> None:
        self._log(self.page_errors, "page errors", text)

    def overflow_notes(self) -> list[str]:
        """One line per capped log, saying how many entries it left out."""
        return [f"{count} more {what} not listed (log capped at {MAX_LOGGED_EVENTS})"
                for what, count in self.unlisted.items() if count]


@dataclass
class AppPage:
    """A loaded app: the page, its context and the log of what it tried."""

    page: Page
    context: BrowserContext
    events: PageEvents
    files: dict[str, bytes]


@asynccontextmanager
async def open_app(
    html: str | bytes,
    config: BrowserConfig | None = None,
    extra_files: dict[str, bytes] | None = None,
    *,
    seed: int | None = None,
    fixed_clock: bool = False,
) -> AsyncIterator[AppPage]:
    """A page with the app loaded at `APP_URL`, as in a fresh context; released (its log kept) on exit.

    `extra_files` maps paths under the app origin (e.g. "style.css") to their bytes. `seed` makes
    the app's `Math.random` a PRNG seeded with it (None: the browser's own); `fixed_clock` starts the
    app's clock (`Date`, `performance.timeOrigin`) at `cua.FIXED_CLOCK_START`, then lets it run.
    Both are installed before any of the app's scripts runs (`cua._seeding`). `config.transform`
    (a variation or an injected defect) is served with the page and its script run once the app
    has loaded (`cua._transform`); a script that fails is a page error `transform '<name>': …`.

    With `config.reuse_pages` (the default) the page may be a warm one that an earlier app used in
    this process, reset first to what a fresh context shows (`_reset`: the app's storage of every
    kind, cookies, history, `window.name`; the old document with its timers, workers, focus and
    scroll is gone with the navigation away) — tests/cua/test_warm_pages.py proves the next app sees
    none of it. A page is reused only after an app that ended normally on it; one that crashed,
    opened pop-ups, raised, has served `WARM_PAGE_USES` apps, or on which the caller set anything
    that outlives a document (a fake clock, routes, headers, emulation, handlers, timeouts…:
    `cua._caller_state`) is closed instead.

    Raises:
        TypeError: `seed` is not an int (or None).
    """
    config = config or BrowserConfig()
    init_scripts = [script for script in (
        seeding_script(seed, fixed_clock),
        f"({_IN_PAGE_SELECT_PICKER})()" if config.in_page_select_picker else None,
        short_timers_script(config.short_timers_ms) if config.short_timers_ms else None,
        f"({_STILL_ANIMATIONS})()" if config.still_animations else None,
    ) if script is not None]
    files = {"index.html": serve_html(html.encode("utf-8") if isinstance(html, str) else html, config.transform),
             **(extra_files or {})}
    events = PageEvents()
    warm = _take_warm(config) if config.reuse_pages else None
    if warm is None:
        warm = await _new_warm(config, _Serving(files, events))
    else:
        warm.serving.files, warm.serving.events = files, events
    page, context = warm.page, warm.context
    released_cleanly = False
    try:
        # Per app (a seed is per rollout), in the order they must run: before any of the app's scripts.
        warm.scripts = [await page.add_init_script(script=script) for script in init_scripts]
        try:
            # Commit, then the document complete. Not Playwright's "load": an app that starts to
            # navigate away while loading (answered 204, so it stays) never fires its load event.
            await page.goto(APP_URL, wait_until="commit", timeout=config.load_timeout_ms)
            remaining_ms = max(int(config.load_timeout_ms - events.elapsed() * 1000), 100)
            await isolated_world(page).call(_DOCUMENT_COMPLETE, timeout_ms=remaining_ms)
        except Exception as exc:  # a hung or broken app still yields a page to judge
            events.page_error(f"load: {type(exc).__name__}: {(str(exc).splitlines() or [''])[0]}")
        if config.transform is not None and config.transform.script:
            await _apply_script(page, config.transform, events)
        warm.caller.watch_cdp(await isolated_world(page).cdp_session())
        warm.caller.start()
        yield AppPage(page=page, context=context, events=events, files=files)
        await _drain_popups(events)
        released_cleanly = True
    finally:
        warm.closed_because = warm.caller.stop()
        if not (released_cleanly and config.reuse_pages and not warm.closed_because and await _reset(warm)):
            await close_context(context)
        else:
            await _give_back(config, warm)


# ---- warm pages ----------------------------------------------------------------------------------

# A page serves at most this many apps before its context is closed: a renderer's memory grows a
# little with every document it has held, and a fresh one every so often keeps that bounded.
WARM_PAGE_USES = 40
# Idle warm pages kept per browser setting: the pages of the two rollouts a 2-core run has in flight. `make run`
# (bench/make_run.py) was fastest with 2 (438 s; fresh contexts 532 s, 6 kept 502 s) at less memory than 6.
WARM_PAGES_KEPT = 2
RESET_TIMEOUT_S = 3.0  # a healthy page resets in tens of milliseconds; a hung one is closed instead


@dataclass
class _Serving:
    """What a context's route and page handlers serve and log now: swapped for each app opened in it."""

    files: dict[str, bytes]
    events: PageEvents


@dataclass
class _Warm:
    """A context with its one page, the handlers installed once, and the current app's init scripts."""

    context: BrowserContext
    page: Page
    serving: _Serving
    caller: CallerState
    uses: int = 0
    scripts: list = field(default_factory=list)
    closed_because: list[str] = field(default_factory=list)  # what the last caller set that a reset cannot undo


_idle: dict[tuple, list[_Warm]] = {}


def _pool_key(config: BrowserConfig) -> tuple:
    # What is fixed for a context's whole life (its browser, its viewport); the rest is set per app.
    return (id(asyncio.get_running_loop()), config.executable_path, config.headless, str(config.viewport),
            config.renderer_heap_limit_mb)


def _take_warm(config: BrowserConfig) -> _Warm | None:
    idle = _idle.get(_pool_key(config)) or []
    while idle:
        warm = idle.pop()
        browser = warm.context.browser  # a browser that was closed or died took its contexts with it
        if browser is not None and browser.is_connected() and not warm.page.is_closed():
            return warm
    return None


async def _give_back(config: BrowserConfig, warm: _Warm) -> None:
    idle = _idle.setdefault(_pool_key(config), [])
    if len(idle) >= WARM_PAGES_KEPT:
        await close_context(warm.context)
    else:
        idle.append(warm)


def _take_all_idle() -> list[_Warm]:
    """This event loop's idle warm pages, out of the pool."""
    loop = id(asyncio.get_running_loop())
    return [warm for key in [k for k in _idle if k[0] == loop] for warm in _idle.pop(key)]


async def close_warm_pages() -> int:
    """Close the idle warm pages of this event loop's browsers (their renderers exit); how many were closed.
    A long-lived process that stops rolling out for a while, or a test that counts renderers, calls this."""
    closing = _take_all_idle()
    for warm in closing:
        await close_context(warm.context)
    return len(closing)


async def close_browser() -> None:
    """Close this event loop's browsers (and with them their warm pages)."""
    _take_all_idle()  # their contexts close with the browser
    await _close_browsers()


async def _new_warm(config: BrowserConfig, serving: _Serving) -> _Warm:
    context = await new_context(config)
    try:
        await _contain(context, serving)
        page = await asyncio.wait_for(context.new_page(), CONTEXT_TIMEOUT_S)
        _watch_page(page, serving)
    except BaseException:
        await close_context(context)
        raise
    return _Warm(context=context, page=page, serving=serving, caller=CallerState(page, context))


async def _reset(warm: _Warm) -> bool:
    """Bring a page that served an app back to what a fresh context shows; False if it cannot be reused.

    The navigation away ends the app's document — its timers, workers, channels, focus, scroll and
    hover go with it; what outlives a document is cleared: every kind of storage of the app's origin
    (local and session storage, IndexedDB, Cache Storage, service workers: `Storage.clearDataForOrigin`),
    cookies, the history entries (`Page.resetNavigationHistory`) and `window.name`.
    """
    page = warm.page
    warm.uses += 1
    events = warm.serving.events
    if (warm.uses >= WARM_PAGE_USES or page.is_closed() or events.crashed or events.popups_closed
            or len(warm.context.pages) != 1):
        return False
    warm.serving.events = PageEvents()  # what the old document does while it unloads is nobody's record
    try:
        async with asyncio.timeout(RESET_TIMEOUT_S):
            for script in warm.scripts:
                await script.dispose()
            warm.scripts = []
            await page.goto("about:blank", wait_until="commit")
            cdp = await isolated_world(page).cdp_session()
            await cdp.send("Storage.clearDataForOrigin", {"origin": APP_ORIGIN, "storageTypes": "all"})
            await warm.context.clear_cookies()
            await cdp.send("Page.resetNavigationHistory")
            await page.evaluate("() => { window.name = ''; }")
        isolated_world(page).forget()  # its worlds died with the document
        return True
    except Exception:
        return False


TRANSFORM_TIMEOUT_MS = 15_000  # generous: a loaded 2-core worker; the script itself takes milliseconds


async def _apply_script(page: Page, transform: PageTransform, events: PageEvents) -> None:
    """Run the transform's script in the harness's world; a failure is logged, never raised (the page
    is still judged, and a proof of the transformed app then fails with the reason in the log)."""
    try:
        events.transform_report = await isolated_world(page).call(transform.script, *transform.args,
                                                                  timeout_ms=TRANSFORM_TIMEOUT_MS)
    except Exception as exc:
        events.page_error(f"transform '{transform.name}': {type(exc).__name__}: {(str(exc).splitlines() or [''])[0][:200]}")


POPUP_QUIET_S = 0.05
POPUP_DRAIN_CAP_S = 0.5


async def _drain_popups(events: PageEvents) -> None:
    """An app that opened pop-ups may have more on the way (the browser announces each new window
    a little later than the click that opened it): let them arrive, so that the log counts them."""
    if not events.popups_closed:
        return
    deadline = time.monotonic() + POPUP_DRAIN_CAP_S
    seen = -1
    while events.popups_closed != seen and time.monotonic() < deadline:
        seen = events.popups_closed
        await asyncio.sleep(POPUP_QUIET_S)


async def _contain(context: BrowserContext, serving: _Serving) -> None:
    async def route(route: Route) -> None:
        request = route.request
        url = request.url
        files, events = serving.files, serving.events
        if url.startswith(APP_ORIGIN + "/"):
            path = url[len(APP_ORIGIN) + 1 :].split("?", 1)[0].split("#", 1)[0] or "index.html"
            if path in files:
                await route.fulfill(status=200, body=files[path], content_type=_content_type(path))
            else:
                await route.fulfill(status=404, body=b"not found")
            return
        events.block(
            BlockedRequest(url=url[:500], method=request.method, resource_type=request.resource_type, at_s=events.elapsed())
        )
        if _leaves_the_app(request):
            # Answer a top-level navigation away from the app locally with "204 No Content":
            # the browser then stays on the app (an abort would replace it with an error page,
            # a dead end for the agent), and still nothing leaves the machine.
            await route.fulfill(status=204, body=b"")
            return
        await route.abort("blockedbyclient")

    async def block_socket(ws) -> None:
        events = serving.events
        events.block(BlockedRequest(url=ws.url[:500], method="WEBSOCKET", resource_type="websocket", at_s=events.elapsed()))
        await ws.close()

    await context.route("**/*", route)
    await context.route_web_socket("**/*", block_socket)

    def on_page(page: Page) -> None:
        # Pop-ups are new pages of the context; the first page is the app itself.
        if len(context.pages) > 1 and page is not context.pages[0]:
            serving.events.popups_closed += 1
            asyncio.ensure_future(_close_quietly(page))

    context.on("page", on_page)


def _watch_page(page: Page, serving: _Serving) -> None:
    async def on_dialog(dialog: Dialog) -> None:
        events = serving.events
        events.dialog(DialogRecord(kind=dialog.type, message=dialog.message[:300], at_s=events.elapsed()))
        with suppress(Exception):
            # Accepting is the neutral answer: alerts close, confirms say yes, prompts get "".
            await dialog.accept()

    async def on_download(download) -> None:
        serving.events.downloads_refused += 1
        with suppress(Exception):
            await download.cancel()

    def on_crash(_page: Page) -> None:
        serving.events.crashed = True

    page.on("dialog", on_dialog)
    page.on("download", on_download)
    page.on("crash", on_crash)
    page.on("pageerror", lambda error: serving.events.page_error(str(error)[:300]))


def _leaves_the_app(request) -> bool:
    """A navigation of a page's top frame (the app's own, or a pop-up's) to another origin."""
    try:
        return request.is_navigation_request() and request.frame.parent_frame is None
    except Exception:  # requests of workers have no frame
        return False


async def _close_quietly(page: Page) -> None:
    with suppress(Exception):
        await page.close(run_before_unload=False)


def _content_type(path: str) -> str:
    suffix = path.rsplit(".", 1)[-1].lower()
    return {
        "html": "text/html; charset=utf-8",
        "js": "text/javascript",
        "css": "text/css",
        "json": "application/json",
        "png": "image/png",
        "svg": "image/svg+xml",
    }.get(suffix, "application/octet-stream")
