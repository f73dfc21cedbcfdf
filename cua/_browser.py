"""The browser environment: one Chromium per process (per event loop), a fresh context per app.

The environment owns the browser (BrowserGym's rule): callers get a page with the app loaded
and never launch or share browsers themselves. The app is served from a local origin by
request interception; every other request is blocked and logged, dialogs are answered and
logged, pop-ups closed and downloads refused, so an untrusted app cannot reach the network or
stall the harness. What interception cannot see (WebRTC's own sockets) is shut by launch
switches; a renderer's JS heap is capped so a runaway app crashes its own page, not the worker;
a browser or driver that died is relaunched, and one that will not close is killed.
"""

from __future__ import annotations

import asyncio
import os
import time
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import AsyncIterator

from playwright.async_api import Browser, BrowserContext, Dialog, Page, Playwright, Route, async_playwright
from pydantic import BaseModel, Field

from . import _processes
from ._isolated import isolated_world

APP_ORIGIN = "http://aui-app.localhost"
APP_URL = f"{APP_ORIGIN}/index.html"

# Adopted (not a <style> element), so checkers that count or read the app's elements see no change.
_IN_PAGE_SELECT_PICKER = """(() => {
  try {
    const sheet = new CSSStyleSheet();
    sheet.replaceSync('select:not([multiple]):not([size]), select:not([multiple]):not([size])::picker(select) '
      + '{ appearance: base-select; }');
    document.adoptedStyleSheets = [...document.adoptedStyleSheets, sheet];
  } catch (e) { /* older engines: keep the native pop-up */ }
})();"""

_DOCUMENT_COMPLETE = """new Promise(resolve => {
  const check = () => document.readyState === 'complete' && resolve(true);
  document.addEventListener('readystatechange', check);
  check();
})"""

# From environment.md: stop Chromium's own background traffic; local origins still load.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
    "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE localhost , EXCLUDE 127.0.0.1",
    # WebRTC opens its own UDP/TCP sockets to STUN/TURN servers named by IP, which request
    # interception never sees. Allow it only through a proxy, and make the proxy a dead local
    # port (loopback included, `<-loopback>`): nothing it tries can leave the machine.
    "--webrtc-ip-handling-policy=disable_non_proxied_udp",
    "--force-webrtc-ip-handling-policy",
    "--proxy-server=http://127.0.0.1:9",
    "--proxy-bypass-list=<-loopback>",
]

# Bounds on talking to the browser itself (not the app): generous, for a loaded 2-core worker.
CONTEXT_TIMEOUT_S = 30.0
CLOSE_TIMEOUT_S = 10.0
BROWSER_CLOSE_TIMEOUT_S = 15.0
HEALTH_TIMEOUT_S = 10.0

# An app that floods the logs (a request or dialog every tick) must not grow the trajectory
# without bound; past the cap attempts are counted, not listed.
MAX_LOGGED_EVENTS = 300


class BrowserConfig(BaseModel):
    """How the worker's Chromium is launched and how big its viewport is."""

    executable_path: str = Field(
        default_factory=lambda: os.environ.get("AUI_CHROMIUM", "/usr/bin/chromium"),
        description="Chromium binary; the Debian package by default (env AUI_CHROMIUM overrides).",
    )
    headless: bool = True
    viewport_width: int = Field(default=1280, ge=200, le=4096)
    viewport_height: int = Field(default=720, ge=200, le=4096)
    load_timeout_ms: int = Field(default=15_000, ge=100, description="Cap on loading the app.")
    renderer_heap_limit_mb: int | None = Field(
        default=1024,
        ge=64,
        description="V8 old-space cap of every page, applied at launch: an app allocating without end "
        "crashes its own renderer at this size (a `crash` the rollout records) instead of taking gigabytes "
        "from the worker. None keeps V8's default (about 4 GB per page).",
    )
    in_page_select_picker: bool = Field(
        default=True,
        description="Render <select> drop-downs inside the page (CSS `appearance: base-select`). Headless "
        "Chromium draws the native pop-up into screenshots but sends clicks on it to the page underneath, "
        "so an agent could never pick an option it sees; with this on it can, with real mouse input.",
    )


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
    started: float = field(default_factory=time.monotonic)
    # Attempts beyond MAX_LOGGED_EVENTS, counted but not listed.
    blocked_unlisted: int = 0
    dialogs_unlisted: int = 0
    page_errors_unlisted: int = 0

    def elapsed(self) -> float:
        return round(time.monotonic() - self.started, 3)

    def block(self, request: BlockedRequest) -> None:
        if len(self.blocked_requests) < MAX_LOGGED_EVENTS:
            self.blocked_requests.append(request)
        else:
            self.blocked_unlisted += 1

    def dialog(self, record: DialogRecord) -> None:
        if len(self.dialogs) < MAX_LOGGED_EVENTS:
            self.dialogs.append(record)
        else:
            self.dialogs_unlisted += 1

    def page_error(self, text: str) -> None:
        if len(self.page_errors) < MAX_LOGGED_EVENTS:
            self.page_errors.append(text)
        else:
            self.page_errors_unlisted += 1

    def overflow_notes(self) -> list[str]:
        """One line per capped log, saying how many entries it left out."""
        notes = []
        for count, what in (
            (self.blocked_unlisted, "blocked requests"),
            (self.dialogs_unlisted, "dialogs"),
            (self.page_errors_unlisted, "page errors"),
        ):
            if count:
                notes.append(f"{count} more {what} not listed (log capped at {MAX_LOGGED_EVENTS})")
        return notes


@dataclass
class AppPage:
    """A loaded app: the page, its context and the log of what it tried."""

    page: Page
    context: BrowserContext
    events: PageEvents
    files: dict[str, bytes]


class _LoopBrowser:
    """The browser of one event loop; Playwright objects must stay on the loop that made them."""

    def __init__(self) -> None:
        self.playwright: Playwright | None = None
        self.browser: Browser | None = None
        self.marker: str | None = None  # the launch switch by which its processes are found
        self.lock = asyncio.Lock()


_browsers: dict[int, _LoopBrowser] = {}


async def get_browser(config: BrowserConfig | None = None) -> Browser:
    """This event loop's browser, launched on first use and relaunched if it died."""
    config = config or BrowserConfig()
    loop_id = id(asyncio.get_running_loop())
    holder = _browsers.setdefault(loop_id, _LoopBrowser())
    async with holder.lock:
        if holder.browser is not None and holder.browser.is_connected():
            return holder.browser
        if holder.browser is not None:  # it died: release what is left of it before relaunching
            await _release(holder, stop_driver=False)
        if holder.playwright is None:
            holder.playwright = await async_playwright().start()
        executable = Path(config.executable_path)
        if not executable.exists():
            raise FileNotFoundError(
                f"Chromium not found at '{executable}'. Install Debian's package "
                "(apt-get install chromium) or set AUI_CHROMIUM to the binary."
            )
        marker = _processes.new_marker()
        args = [*CHROMIUM_ARGS, marker]
        if config.renderer_heap_limit_mb:
            args.append(f"--js-flags=--max-old-space-size={config.renderer_heap_limit_mb}")
        holder.browser = await holder.playwright.chromium.launch(
            executable_path=str(executable), headless=config.headless, args=args
        )
        holder.marker = marker
        return holder.browser


async def close_browser() -> None:
    """Close this event loop's browser and Playwright driver (idempotent).

    A browser that does not close within BROWSER_CLOSE_TIMEOUT_S (a renderer that will not die)
    is killed with its child processes, so nothing outlives the worker.
    """
    holder = _browsers.pop(id(asyncio.get_running_loop()), None)
    if holder is None:
        return
    await _release(holder, stop_driver=True)


async def _discard_browser(browser: Browser) -> None:
    """Drop this loop's browser if it is still `browser` (it died or stopped answering)."""
    holder = _browsers.get(id(asyncio.get_running_loop()))
    if holder is None:
        return
    async with holder.lock:
        if holder.browser is browser:
            # A dead driver takes the Playwright object with it: start a new one as well.
            await _release(holder, stop_driver=True)


async def _release(holder: _LoopBrowser, *, stop_driver: bool) -> None:
    browser, marker = holder.browser, holder.marker
    holder.browser, holder.marker = None, None
    if browser is not None:
        try:
            await asyncio.wait_for(browser.close(), BROWSER_CLOSE_TIMEOUT_S)
        except asyncio.CancelledError:
            raise
        except Exception:  # hung or gone: the kill below settles it
            pass
    # Found afresh by its marker (never a remembered pid the kernel may have handed on): a
    # browser that would not close, or whose driver died under it, is killed with its children.
    pid = _processes.find_marked(marker) if marker else None
    if pid is not None:
        _processes.kill_tree(pid)
    if stop_driver and holder.playwright is not None:
        playwright, holder.playwright = holder.playwright, None
        try:
            await asyncio.wait_for(playwright.stop(), BROWSER_CLOSE_TIMEOUT_S)
        except Exception:  # a driver that already died has nothing to stop
            pass


async def _healthy(browser: Browser) -> bool:
    """Does the browser still answer a trivial browser-level command?"""
    if not browser.is_connected():
        return False
    try:
        async def ask() -> None:
            session = await browser.new_browser_cdp_session()
            try:
                await session.send("Browser.getVersion")
            finally:
                await session.detach()

        await asyncio.wait_for(ask(), HEALTH_TIMEOUT_S)
        return True
    except Exception:
        return False


async def _new_context(config: BrowserConfig) -> BrowserContext:
    """A fresh context; if the browser (or the driver behind it) died, relaunch once and retry."""
    browser = await get_browser(config)
    for attempt in range(2):
        try:
            return await asyncio.wait_for(
                browser.new_context(
                    viewport={"width": config.viewport_width, "height": config.viewport_height},
                    accept_downloads=False,
                    service_workers="block",
                    device_scale_factor=1,
                ),
                CONTEXT_TIMEOUT_S,
            )
        except Exception:
            if attempt == 1 or await _healthy(browser):
                raise  # a working browser that refused: not ours to fix by relaunching
            await _discard_browser(browser)
            browser = await get_browser(config)
    raise AssertionError("unreachable")


@asynccontextmanager
async def open_app(
    html: str | bytes,
    config: BrowserConfig | None = None,
    extra_files: dict[str, bytes] | None = None,
) -> AsyncIterator[AppPage]:
    """A fresh context with the app loaded at `APP_URL`; closed (and its log kept) on exit.

    `extra_files` maps paths under the app origin (e.g. "style.css") to their bytes.
    """
    config = config or BrowserConfig()
    files = {"index.html": html.encode("utf-8") if isinstance(html, str) else html, **(extra_files or {})}
    context = await _new_context(config)
    events = PageEvents()
    try:
        if config.in_page_select_picker:
            await context.add_init_script(script=_IN_PAGE_SELECT_PICKER)
        await _contain(context, files, events)
        page = await asyncio.wait_for(context.new_page(), CONTEXT_TIMEOUT_S)
        _watch_page(page, events)
        try:
            # Commit, then the document complete. Not Playwright's "load": an app that starts to
            # navigate away while loading (answered 204, so it stays) never fires its load event.
            await page.goto(APP_URL, wait_until="commit", timeout=config.load_timeout_ms)
            remaining_ms = max(int(config.load_timeout_ms - events.elapsed() * 1000), 100)
            await isolated_world(page).evaluate(_DOCUMENT_COMPLETE, timeout_ms=remaining_ms)
        except Exception as exc:  # a hung or broken app still yields a page to judge
            events.page_error(f"load: {type(exc).__name__}: {str(exc).splitlines()[0]}")
        yield AppPage(page=page, context=context, events=events, files=files)
    finally:
        await _close_context(context)


async def _close_context(context: BrowserContext) -> None:
    """Close a rollout's context; if the browser will not (it hangs), retire the browser."""
    try:
        await asyncio.wait_for(context.close(), CLOSE_TIMEOUT_S)
        return
    except asyncio.CancelledError:
        raise
    except Exception:
        pass
    browser = context.browser
    if browser is not None and browser.is_connected() and not await _healthy(browser):
        # A context that cannot be closed in a browser that no longer answers would leak its
        # renderers for the worker's life; the next rollout gets a fresh browser instead.
        await _discard_browser(browser)


async def _contain(context: BrowserContext, files: dict[str, bytes], events: PageEvents) -> None:
    async def route(route: Route) -> None:
        request = route.request
        url = request.url
        if url.startswith(APP_ORIGIN + "/"):
            path = url[len(APP_ORIGIN) + 1 :].split("?", 1)[0].split("#", 1)[0] or "index.html"
            if path in files:
                await route.fulfill(status=200, body=files[path], content_type=_content_type(path))
                return
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
        events.block(BlockedRequest(url=ws.url[:500], method="WEBSOCKET", resource_type="websocket", at_s=events.elapsed()))
        await ws.close()

    await context.route("**/*", route)
    await context.route_web_socket("**/*", block_socket)

    def on_page(page: Page) -> None:
        # Pop-ups are new pages of the context; the first page is the app itself.
        if len(context.pages) > 1 and page is not context.pages[0]:
            events.popups_closed += 1
            asyncio.ensure_future(_close_quietly(page))

    context.on("page", on_page)


def _watch_page(page: Page, events: PageEvents) -> None:
    async def on_dialog(dialog: Dialog) -> None:
        events.dialog(DialogRecord(kind=dialog.type, message=dialog.message[:300], at_s=events.elapsed()))
        try:
            # Accepting is the neutral answer: alerts close, confirms say yes, prompts get "".
            await dialog.accept()
        except Exception:
            pass

    async def on_download(download) -> None:
        events.downloads_refused += 1
        try:
            await download.cancel()
        except Exception:
            pass

    def on_crash(_page: Page) -> None:
        events.crashed = True

    page.on("dialog", on_dialog)
    page.on("download", on_download)
    page.on("crash", on_crash)
    page.on("pageerror", lambda error: events.page_error(str(error)[:300]))


def _leaves_the_app(request) -> bool:
    """A navigation of a page's top frame (the app's own, or a pop-up's) to another origin."""
    try:
        return request.is_navigation_request() and request.frame.parent_frame is None
    except Exception:  # requests of workers have no frame
        return False


async def _close_quietly(page: Page) -> None:
    try:
        await page.close(run_before_unload=False)
    except Exception:
        pass


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
