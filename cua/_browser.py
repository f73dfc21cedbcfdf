"""The browser environment: one Chromium per process (per event loop), a fresh context per app.

The environment owns the browser (BrowserGym's rule): callers get a page with the app loaded
and never launch or share browsers themselves. The app is served from a local origin by
request interception; every other request is blocked and logged, dialogs are answered and
logged, pop-ups closed and downloads refused, so an untrusted app cannot reach the network or
stall the harness.
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
]


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

    def elapsed(self) -> float:
        return round(time.monotonic() - self.started, 3)


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
        if holder.playwright is None:
            holder.playwright = await async_playwright().start()
        executable = Path(config.executable_path)
        if not executable.exists():
            raise FileNotFoundError(
                f"Chromium not found at '{executable}'. Install Debian's package "
                "(apt-get install chromium) or set AUI_CHROMIUM to the binary."
            )
        holder.browser = await holder.playwright.chromium.launch(
            executable_path=str(executable), headless=config.headless, args=CHROMIUM_ARGS
        )
        return holder.browser


async def close_browser() -> None:
    """Close this event loop's browser and Playwright driver (idempotent)."""
    holder = _browsers.pop(id(asyncio.get_running_loop()), None)
    if holder is None:
        return
    if holder.browser is not None:
        try:
            await holder.browser.close()
        except Exception:  # already gone: nothing to release
            pass
    if holder.playwright is not None:
        await holder.playwright.stop()


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
    browser = await get_browser(config)
    files = {"index.html": html.encode("utf-8") if isinstance(html, str) else html, **(extra_files or {})}
    context = await browser.new_context(
        viewport={"width": config.viewport_width, "height": config.viewport_height},
        accept_downloads=False,
        service_workers="block",
        device_scale_factor=1,
    )
    events = PageEvents()
    try:
        if config.in_page_select_picker:
            await context.add_init_script(script=_IN_PAGE_SELECT_PICKER)
        await _contain(context, files, events)
        page = await context.new_page()
        _watch_page(page, events)
        try:
            await page.goto(APP_URL, wait_until="load", timeout=config.load_timeout_ms)
        except Exception as exc:  # a hung or broken app still yields a page to judge
            events.page_errors.append(f"load: {type(exc).__name__}: {str(exc).splitlines()[0]}")
        yield AppPage(page=page, context=context, events=events, files=files)
    finally:
        try:
            await asyncio.wait_for(context.close(), timeout=10)
        except Exception:
            pass


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
        events.blocked_requests.append(
            BlockedRequest(url=url[:500], method=request.method, resource_type=request.resource_type, at_s=events.elapsed())
        )
        await route.abort("blockedbyclient")

    async def block_socket(ws) -> None:
        events.blocked_requests.append(
            BlockedRequest(url=ws.url[:500], method="WEBSOCKET", resource_type="websocket", at_s=events.elapsed())
        )
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
        events.dialogs.append(DialogRecord(kind=dialog.type, message=dialog.message[:300], at_s=events.elapsed()))
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
    page.on("pageerror", lambda error: events.page_errors.append(str(error)[:300]))


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
