"""The worker's Chromium: launched once per event loop, relaunched if it dies, killed if it hangs.

`get_browser` hands out this loop's browser; `new_context` makes a rollout's context and, if the
browser or the Playwright driver behind it has died, relaunches once and retries; a context that
will not close in a browser that no longer answers retires the browser (`close_context`). A
browser that will not close is killed with its child processes, found by a marker switch on its
command line (`_processes`), so nothing outlives the worker.
"""

from __future__ import annotations

import asyncio
import os
import shlex
from contextlib import suppress
from pathlib import Path

from playwright.async_api import Browser, BrowserContext, Playwright, async_playwright
from pydantic import BaseModel, Field, ValidationInfo, field_validator, model_validator

from . import _processes
from ._transform import PageTransform
from ._viewport import DEFAULT_VIEWPORT, Viewport

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
    # port (loopback included, `<-loopback>`): nothing it tries can leave the machine. The full
    # chromium reads the policy from the first switch (the second, a flag there, makes it binding);
    # the headless shell ignores the first and reads the policy as the second's value — without
    # that value its STUN requests reached a local listener (tests/cua/test_hostile_apps.py).
    "--webrtc-ip-handling-policy=disable_non_proxied_udp",
    "--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
    "--proxy-server=http://127.0.0.1:9",
    "--proxy-bypass-list=<-loopback>",
]

# The headless shell hints glyphs fully by default; the full chromium takes fontconfig's setting, which is
# slight on Debian. With this switch every screenshot of every reference solution of the bundled and GPT-5
# apps is the same on both binaries but for the differences `bench/fidelity_known.json` explains; without
# it, small text differed on 10 of 24 apps (up to 67 levels of a colour channel on glyph edges).
HEADLESS_SHELL_ARGS = ["--font-render-hinting=slight"]

# Bounds on talking to the browser itself (not the app): generous, for a loaded 2-core worker.
CONTEXT_TIMEOUT_S = 30.0
CLOSE_TIMEOUT_S = 10.0
BROWSER_CLOSE_TIMEOUT_S = 15.0
HEALTH_TIMEOUT_S = 10.0


EXTRA_ARGS_ENV = "AUI_CHROMIUM_ARGS"
"""Extra Chromium switches (shell syntax), added to every launch and recorded with the others."""

FULL_CHROMIUM = "/usr/bin/chromium"
# The binary itself, not Debian's /usr/bin/chromium-headless-shell: that wrapper is a shell script that
# runs it as a child (no `exec`), so a signal to the browser's main process would reach only the shell.
HEADLESS_SHELL = "/usr/lib/chromium/chromium-headless-shell"
_SHELL_WRAPPER = "/usr/bin/chromium-headless-shell"


def _unwrapped(path: str) -> str:
    """Debian's shell wrapper as the binary it runs (where installed); any other path as it is."""
    return HEADLESS_SHELL if path == _SHELL_WRAPPER and Path(HEADLESS_SHELL).exists() else path


def default_chromium(headless: bool = True) -> str:
    """The binary a config that names none runs: AUI_CHROMIUM if set; else, headless, Debian's
    `chromium-headless-shell` where it is installed; else Debian's full `chromium`.

    Why the shell: the same Chromium (version, Blink, V8), without the browser UI. The full binary
    in headless mode starts, per fresh context, renderers for browser UI that nobody sees
    (`--top-chrome-webui`) and utility processes; the shell starts one renderer. 40 cycles of {new
    context, load an app, click, screenshot, close} cost 3.4× less CPU on it (`bench/engine.py`).
    Headed runs (and anything the shell cannot do) keep the full binary.
    """
    chosen = os.environ.get("AUI_CHROMIUM")
    if chosen:
        return _unwrapped(chosen)
    return HEADLESS_SHELL if headless and Path(HEADLESS_SHELL).exists() else FULL_CHROMIUM


def is_headless_shell(executable_path: str) -> bool:
    """Whether a binary is the headless shell (by name: Debian's wrapper and the binary it runs share it)."""
    return "headless-shell" in Path(executable_path).name or "headless_shell" in Path(executable_path).name


class BrowserConfig(BaseModel):
    """How the worker's Chromium is launched and how big its viewport is."""

    headless: bool = True
    executable_path: str = Field(
        default=None,  # resolved by `_pick_binary` from `headless`: the model always holds a path
        validate_default=True,
        description="Chromium binary. None (the default): `default_chromium(headless)` — AUI_CHROMIUM if set, else "
        "Debian's chromium-headless-shell for headless runs where installed, else Debian's chromium.",
    )
    viewport: Viewport = Field(default=DEFAULT_VIEWPORT, description="The page's size; also the screenshots' size.")
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
        description="Render a <select>'s drop-down inside the page (CSS `appearance: base-select`) while it is "
        "open. Headless Chromium draws the native pop-up into screenshots but sends clicks on it to the page "
        "underneath, so an agent could never pick an option it sees; with this on it can, with real mouse "
        "input. Until a drop-down opens the page renders as with this off (recorded in each trajectory).",
    )
    short_timers_ms: int = Field(
        default=0, ge=0, le=10_000,
        description="0: off. Else the page counts the app's pending setTimeouts of at most this many ms, and a "
        "rollout, once a step's page has settled, waits until none is pending before it observes (`cua._timers`): "
        "what a step does no longer hangs on how fast the steps before it ran. For rollouts that must repeat "
        "(the defect dataset); recorded in each trajectory.",
    )
    still_animations: bool = Field(
        default=False,
        description="Stop every infinite animation (a floating picture, drifting blobs, a pulse) as it starts "
        "(`_still_animations.js`: a CSS one is cancelled, so the element is drawn with its own style; a scripted one "
        "is paused at its start): the same page state then gives the same pixels whenever it is observed. Finite "
        "animations and transitions run as ever. For environments that must repeat frame for frame (`environments`, "
        "where it is on); recorded in each trajectory.",
    )
    reuse_pages: bool = Field(
        default_factory=lambda: os.environ.get("AUI_REUSE_PAGES", "1") != "0",
        description="Open apps in warm pages that earlier apps of this process used, each reset first to what a "
        "fresh context shows (`cua.open_app`; proven by tests/cua/test_warm_pages.py): no new context, page and "
        "renderer process per app. False (or env AUI_REUSE_PAGES=0, for a before/after): a fresh context for "
        "every app.",
    )
    transform: PageTransform | None = Field(
        default=None,
        description="A serve-time change of every app opened with this config (a variation or an injected defect, "
        "made by `perturb`): its CSS is served with the page, its script run once the app has loaded (recorded in "
        "each trajectory). None: the app as it is.",
    )

    @field_validator("executable_path", mode="before")
    @classmethod
    def _pick_binary(cls, value: str | None, info: ValidationInfo) -> str:
        if value is None or value == "":
            return default_chromium(bool(info.data.get("headless", True)))
        return _unwrapped(str(value))

    @model_validator(mode="after")
    def _shell_is_headless(self) -> "BrowserConfig":
        if not self.headless and is_headless_shell(self.executable_path):
            raise ValueError(f"executable_path '{self.executable_path}' is the headless shell, which cannot show a "
                             f"window: for headless=False use the full chromium ({FULL_CHROMIUM}) or unset AUI_CHROMIUM")
        return self


class _LoopBrowser:
    """The browser of one event loop; Playwright objects must stay on the loop that made them."""

    def __init__(self) -> None:
        self.playwright: Playwright | None = None
        self.browser: Browser | None = None
        self.marker: str | None = None  # the launch switch by which its processes are found
        self.lock = asyncio.Lock()


_browsers: dict[tuple[int, str, bool, str], _LoopBrowser] = {}


def _key(config: BrowserConfig) -> tuple[int, str, bool, str]:
    # One browser per event loop and binary: a run that compares binaries (bench/engine.py, the fidelity
    # check) holds one of each, and a config never gets another binary's browser. The headless shell's
    # window is as large as the viewport (`launch_args`), so there it is one browser per viewport too.
    size = str(config.viewport) if is_headless_shell(config.executable_path) else ""
    return id(asyncio.get_running_loop()), config.executable_path, config.headless, size


async def get_browser(config: BrowserConfig | None = None) -> Browser:
    """This event loop's browser of `config`'s binary, launched on first use and relaunched if it died."""
    config = config or BrowserConfig()
    holder = _browsers.setdefault(_key(config), _LoopBrowser())
    async with holder.lock:
        if holder.browser is not None and holder.browser.is_connected():
            return holder.browser
        if holder.browser is not None:
            # It died: release what is left of it before relaunching, its driver too (a driver that died
            # took the browser with it, and a new launch through it would fail: "Connection closed").
            await _release(holder)
        if holder.playwright is None:
            holder.playwright = await async_playwright().start()
        executable = Path(config.executable_path)
        if not executable.exists():
            raise FileNotFoundError(
                f"Chromium not found at '{executable}'. Install Debian's packages (scripts/install_chromium.sh: "
                "chromium-headless-shell and chromium) or set AUI_CHROMIUM to the binary."
            )
        marker = _processes.new_marker()
        # The run decides when the browser closes (`flows._stop`), not a terminal's Ctrl-C reaching the driver
        holder.browser = await holder.playwright.chromium.launch(
            executable_path=str(executable), headless=config.headless, args=launch_args(config, marker),
            handle_sigint=False, handle_sigterm=False, handle_sighup=False,
        )
        holder.marker = marker
        return holder.browser


def launch_args(config: BrowserConfig, marker: str | None = None) -> list[str]:
    """The switches the project adds to Playwright's own (recorded in the run's manifest)."""
    args = list(CHROMIUM_ARGS)
    if is_headless_shell(config.executable_path):
        # The shell draws a fullscreen element at its window's size (800×600 by default), not the page's:
        # a fullscreen app's screenshots would change size under the agent (the full chromium keeps the viewport).
        args += [*HEADLESS_SHELL_ARGS, f"--window-size={config.viewport.width},{config.viewport.height}"]
    if marker:
        args.append(marker)
    if config.renderer_heap_limit_mb:
        args.append(f"--js-flags=--max-old-space-size={config.renderer_heap_limit_mb}")
    # Switches of the user's own (or a benchmark's, e.g. `--renderer-process-limit=4`), after ours.
    args += shlex.split(os.environ.get(EXTRA_ARGS_ENV, ""))
    return args


async def close_browser() -> None:
    """Close this event loop's browsers and Playwright drivers (idempotent).

    A browser that does not close within BROWSER_CLOSE_TIMEOUT_S (a renderer that will not die)
    is killed with its child processes, so nothing outlives the worker.
    """
    loop_id = id(asyncio.get_running_loop())
    for key in [key for key in _browsers if key[0] == loop_id]:
        holder = _browsers.pop(key, None)
        if holder is not None:
            await _release(holder)


async def discard_browser(browser: Browser) -> None:
    """Drop this loop's browser if it is still `browser` (it died or stopped answering)."""
    loop_id = id(asyncio.get_running_loop())
    for holder in [holder for key, holder in _browsers.items() if key[0] == loop_id]:
        async with holder.lock:
            if holder.browser is browser:
                # A dead driver takes the Playwright object with it: start a new one as well.
                await _release(holder)


async def _release(holder: _LoopBrowser) -> None:
    browser, marker = holder.browser, holder.marker
    holder.browser, holder.marker = None, None
    if browser is not None:
        with suppress(Exception):  # hung or gone: the kill below settles it
            await asyncio.wait_for(browser.close(), BROWSER_CLOSE_TIMEOUT_S)
    # Found afresh by its marker (never a remembered pid the kernel may have handed on): a
    # browser that would not close, or whose driver died under it, is killed with its children.
    pid = _processes.find_marked(marker) if marker else None
    if pid is not None:
        _processes.kill_tree(pid)
    if holder.playwright is not None:
        playwright, holder.playwright = holder.playwright, None
        with suppress(Exception):  # a driver that already died has nothing to stop
            await asyncio.wait_for(playwright.stop(), BROWSER_CLOSE_TIMEOUT_S)


async def browser_answers(browser: Browser) -> bool:
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


async def new_context(config: BrowserConfig) -> BrowserContext:
    """A fresh context; if the browser (or the driver behind it) died, relaunch once and retry."""
    browser = await get_browser(config)
    for attempt in range(2):
        try:
            return await asyncio.wait_for(
                browser.new_context(
                    viewport={"width": config.viewport.width, "height": config.viewport.height},
                    accept_downloads=False,
                    service_workers="block",
                    device_scale_factor=1,
                ),
                CONTEXT_TIMEOUT_S,
            )
        except Exception:
            if attempt == 1 or await browser_answers(browser):
                raise  # a working browser that refused: not ours to fix by relaunching
            await discard_browser(browser)
            browser = await get_browser(config)
    raise AssertionError("unreachable")


async def close_context(context: BrowserContext) -> None:
    """Close a rollout's context; if the browser will not (it hangs), retire the browser."""
    with suppress(Exception):
        return await asyncio.wait_for(context.close(), CLOSE_TIMEOUT_S)
    browser = context.browser
    if browser is not None and browser.is_connected() and not await browser_answers(browser):
        # A context that cannot be closed in a browser that no longer answers would leak its
        # renderers for the worker's life; the next rollout gets a fresh browser instead.
        await discard_browser(browser)
