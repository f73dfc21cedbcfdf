"""The environment of one episode: an app in a fresh browser context, driven one action at a time.

BrowserGym's shape: `reset` loads the app and returns the first observation; `step` executes one
action through the coordinate executor, waits for the page to settle, observes it and asks the
task's checker. The environment owns the context and its page, settling, screenshots, the checker
call, the page's event log and the optional Playwright trace. It knows nothing of policies,
re-asks, stuck rules or files: that is the rollout loop (`cua._rollout`), one client of this
class; an agent of your own is another.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from pathlib import Path

from playwright.async_api import Page

from ._actions import Action
from ._browser import AppPage, PageEvents, open_app
from ._check import Checker, CheckResult
from ._config import RolloutConfig
from ._coordinates import place_action
from ._executor import execute, page_fingerprint
from ._isolated import isolated_world
from ._policy import Observation
from ._screenshot import ScreenshotTimeout, capture_png
from ._settle import is_quiet_since_start, settle, start_settling
from ._timers import TIMERS_GRACE_MS, wait_for_short_timers
from ._trajectory import Step
from ._viewport import Viewport

TRACE_STOP_TIMEOUT_S = 30
VISIBLE_TEXT_TIMEOUT_MS = 500
_VISIBLE_TEXT = Path(__file__).with_name("_visible_text.js").read_text(encoding="utf-8")
# Of a step's remaining time, what settling leaves for the observation after it (screenshot,
# fingerprint, checker, write): waiting for motion never eats the whole step.
OBSERVE_RESERVE_MS = 1_000


@dataclass
class StepResult:
    """What `AppEnv.step` returns; unpacks as `observation, check, done = result`.

    `step` is the record of the step (actions in model and screen space, the element under the
    pointer, dom/screen changed, timings, error); its `screenshot` file name is left to whoever
    stores it. `fingerprint` is the page-state hash after the step (None if the page did not answer).
    """

    observation: Observation
    check: CheckResult
    done: bool  # the action was `finished`, or the checker passed (unless `RolloutConfig.stop_on_checker` is off)
    step: Step
    fingerprint: str | None = None

    def __iter__(self) -> Iterator[object]:
        return iter((self.observation, self.check, self.done))


class AppEnv:
    """One app in one fresh browser context at a time, driven by coordinate actions.

        async with AppEnv(config) as env:
            observation = await env.reset(html, task, checker)
            observation, check, done = await env.step(Action(kind="click", point=Point(x=100, y=60)))

    `reset` opens a new context (closing the previous one); the context closes on `close()` or on
    leaving the `async with`. The browser itself is the worker's shared one (`get_browser`); close
    it with `close_browser()` when the process is done with browsers.
    """

    def __init__(self, config: RolloutConfig | None = None, *, extra_files: dict[str, bytes] | None = None):
        self.config = config or RolloutConfig()
        self.extra_files = extra_files
        self.task = ""
        self.checker: Checker | None = None
        self.steps_taken = 0
        self.screenshot: bytes | None = None  # the latest observation's
        self.tracing = False
        self.seed: int | None = None  # the current episode's (`reset`)
        self.fixed_clock = False
        self._app: AppPage | None = None  # kept after closing, so the event log stays readable
        self._opened: AbstractAsyncContextManager[AppPage] | None = None

    async def __aenter__(self) -> "AppEnv":
        return self

    async def __aexit__(self, exc_type, exc, traceback) -> None:
        await self._close_app(exc)

    @property
    def viewport(self) -> Viewport:
        return self.config.browser.viewport

    @property
    def page(self) -> Page:
        """The app's page, for offline DOM-reading policies. Raises RuntimeError before `reset`."""
        if self._app is None:
            raise RuntimeError("no app is loaded: call `await env.reset(html, task)` first")
        return self._app.page

    @property
    def browser_version(self) -> str | None:
        """The version of the browser the app is open in (None before `reset`)."""
        browser = self._app.context.browser if self._app is not None else None
        return browser.version if browser is not None else None

    @property
    def events(self) -> PageEvents | None:
        """What the app tried (blocked requests, dialogs, pop-ups, page errors); None before `reset`."""
        return self._app.events if self._app is not None else None

    def time_left(self, deadline: float | None = None) -> float:
        """Seconds left of the episode limit, counted from when the app's context opened (loading included);
        with `deadline` (a `time.monotonic()` reading, the end of a step), of whichever ends first."""
        left = self.config.episode_timeout_s
        if self._app is not None:
            left -= time.monotonic() - self._app.events.started
        return left if deadline is None else min(left, deadline - time.monotonic())

    async def reset(
        self,
        html: str | bytes,
        task: str,
        checker: Checker | None = None,
        *,
        seed: int | None = None,
        fixed_clock: bool = False,
    ) -> Observation:
        """Load `html` in a fresh context and return the first observation of the settled page.

        `seed` seeds the app's `Math.random` (the same seed, the same random demo data; None: the
        browser's own randomness); `fixed_clock` starts the app's clock at `cua.FIXED_CLOCK_START`
        and lets it run from there (timers unaffected). Both hold for this episode only.

        Loading is capped by the episode limit, and so is the first observation (counted from when
        the context opened: making it is the harness's cost, not the app's). A page that fails to
        load still yields an observation; the failure is in `events.page_errors`.

        Raises:
            TypeError: `seed` is not an int (or None).
            TimeoutError: the episode limit passed before the first observation.
            ScreenshotTimeout: the page produced no frame (hung renderer).
            Exception: no browser could be launched or no context made.
        """
        await self._close_app(None)
        self._app = None
        self.task, self.checker, self.steps_taken, self.screenshot = task, checker, 0, None
        self.seed, self.fixed_clock = seed, fixed_clock
        episode_ms = int(self.config.episode_timeout_s * 1000)
        browser_config = self.config.browser.model_copy(update={
            "load_timeout_ms": max(100, min(self.config.browser.load_timeout_ms, episode_ms)),
            # a trace records its context's whole life: a traced episode gets a context of its own
            "reuse_pages": self.config.browser.reuse_pages and not self.config.trace,
        })
        opened = open_app(html, browser_config, self.extra_files, seed=seed, fixed_clock=fixed_clock)
        self._app = await opened.__aenter__()
        self._opened = opened
        await self._start_trace()
        self.screenshot = await asyncio.wait_for(self._settled_screenshot(), max(self.time_left(), 0.001))
        return self._observation()

    async def step(
        self, action: Action, space: str = "screen", *, record: Step | None = None, deadline: float | None = None
    ) -> StepResult:
        """Execute `action` (its points in coordinate `space`), let the page settle, observe, check.

        Done when the action is `finished` or the checker passes; with `config.stop_on_checker` off,
        only `finished` is done (the checker's verdict is still returned and recorded).
        `finished` executes nothing: the page is judged once more as it is. `record` is a Step to
        fill in (e.g. one holding the model's reply), so that a caller who cuts the step short
        keeps what was recorded so far; a new Step otherwise. `deadline` (a `time.monotonic()`
        reading) is when the caller will cut the step short: settling stops waiting early enough to
        observe before it (as it does for the episode limit). Input errors (an unknown key, a
        missed element) are recorded in `step.error`, never raised. A point slightly off the
        screen is clamped onto it and `step.notes` says so (`cua.place_action`).

        Raises:
            RuntimeError: before `reset`.
            OffScreenPoint: a point is not finite or too far off the screen; nothing was executed,
                no step counted and `record` left as it was.
            KeyError: `space` is not a known coordinate space.
            ScreenshotTimeout: the page produced no frame (hung renderer).
            playwright Error: the page is closed or crashed.
        """
        page = self.page
        started = time.perf_counter()
        # Judged before anything is recorded or done: a refused point leaves no trace of a step.
        screen_action, clamped = place_action(action, space, self.viewport.width, self.viewport.height)
        step = record if record is not None else Step(index=0)
        step.index = self.steps_taken + 1
        step.model_action = action
        step.screen_action = screen_action
        step.notes.extend(clamped)
        if action.kind == "finished":
            step.at_s = self._app.events.elapsed()
            check, step.timings.checker_ms = await self._check()
            step.checker_passed, step.checker_error = check.passed, check.reason
            step.dom_changed = step.screen_changed = False
            self._count(step, started)
            return StepResult(self._observation(), check, True, step)

        wait_cap_ms = self._wait_cap(deadline) if screen_action.kind == "wait" else self.config.wait_cap_ms
        if wait_cap_ms < self.config.wait_cap_ms:
            step.notes.append(f"wait: cut to {wait_cap_ms} ms by the time left of the step")
        step.at_s = self._app.events.elapsed()
        executed = await execute(page, screen_action, default_scroll_px=self.config.scroll_px, wait_cap_ms=wait_cap_ms)
        step.target, step.error = executed.target, executed.error
        if executed.note:
            step.notes.append(executed.note)
        step.timings.execute_ms = executed.execute_ms
        screenshot, fingerprint, check = await self._observe_settled(step, deadline)
        step.dom_changed = None if fingerprint is None else fingerprint != executed.fingerprint_before
        step.screen_changed = screenshot != self.screenshot
        step.checker_passed, step.checker_error = check.passed, check.reason
        self.screenshot = screenshot
        self._count(step, started)
        done = check.passed and self.config.stop_on_checker
        return StepResult(self._observation(), check, done, step, fingerprint)

    async def visible_text(self, max_chars: int, timeout_ms: int = VISIBLE_TEXT_TIMEOUT_MS) -> tuple[str, bool]:
        """The page's visible text now (`document.body.innerText`, read in the harness's isolated
        world: the app's scripts cannot change what it says), at most `max_chars` characters, and
        whether it was cut. Form fields' values are not part of it (innerText leaves them out).

        Raises:
            RuntimeError: before `reset`.
            JavaScriptError: the page could not be read (closed, crashed).
            JavaScriptTimeout: the page did not answer within `timeout_ms` (about a second more on a hung page).
        """
        read = await isolated_world(self.page).call(_VISIBLE_TEXT, max(0, int(max_chars)), timeout_ms=timeout_ms)
        text = str((read or {}).get("text") or "")
        # A page's text may hold lone surrogates (JS strings allow them; UTF-8 does not): replace them.
        text = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
        return text, int((read or {}).get("length") or 0) > max_chars

    async def save_trace(self, path: str | Path) -> bool:
        """Stop the Playwright trace (`config.trace`) and write it to `path`; False if there was none or it failed."""
        if not self.tracing or self._app is None:
            return False
        self.tracing = False
        try:
            await asyncio.wait_for(self._app.context.tracing.stop(path=Path(path)), TRACE_STOP_TIMEOUT_S)
            return True
        except Exception:
            return False

    async def close(self) -> None:
        """Close the app's context (an unsaved trace is dropped). Idempotent; `events` stay readable."""
        await self._close_app(None)

    # ---- observing --------------------------------------------------------------------------

    def _observation(self) -> Observation:
        return Observation(
            task=self.task,
            step=self.steps_taken + 1,
            max_steps=self.config.max_steps,
            screenshot=self.screenshot,
            viewport_width=self.viewport.width,
            viewport_height=self.viewport.height,
        )

    def _count(self, step: Step, started: float) -> None:
        self.steps_taken += 1
        step.timings.total_ms = round(step.timings.model_ms + elapsed_ms(started), 2)

    def _wait_cap(self, deadline: float | None) -> int:
        """How long a `wait` may watch the page: the config's `wait_cap_ms`, cut to the time left of the step and
        the episode less a settle and the observation after it, so a wait never times the step out."""
        left_s = self.time_left(deadline)
        return max(0, min(self.config.wait_cap_ms, int(left_s * 1000) - OBSERVE_RESERVE_MS - self.config.settle_cap_ms))

    def _settle_caps(self, deadline: float | None) -> tuple[int, int]:
        """(cap, motion cap) in ms for settling now: the configured ones, cut to the time left of the
        step (`deadline`) and of the episode, less what observing needs."""
        left_s = self.time_left(deadline)
        budget_ms = max(50, int(left_s * 1000) - OBSERVE_RESERVE_MS)
        config = self.config
        return min(config.settle_cap_ms, budget_ms), min(max(config.settle_cap_ms, config.settle_motion_cap_ms), budget_ms)

    async def _settled_screenshot(self) -> bytes:
        cap_ms, motion_cap_ms = self._settle_caps(None)
        await settle(self.page, self.config.settle_quiet_ms, cap_ms, motion_cap_ms)
        if await self._waited_for_timers(None):
            await settle(self.page, self.config.settle_quiet_ms, cap_ms, motion_cap_ms)
        return await capture_png(self.page)

    async def _waited_for_timers(self, deadline: float | None, step: Step | None = None) -> bool:
        """With `short_timers_ms` on: wait until the app has no short timer pending (`cua._timers`);
        True if it had any (the page may have changed since it settled)."""
        limit = self.config.browser.short_timers_ms
        if not limit:
            return False
        left_s = self.time_left(deadline)
        cap_ms = max(0, min(limit + TIMERS_GRACE_MS, int(left_s * 1000) - OBSERVE_RESERVE_MS))
        waited = await wait_for_short_timers(self.page, cap_ms)
        if step is not None:
            if "error" in waited:
                step.notes.append(f"timers: {waited['error']}")
            elif waited.get("pending"):
                step.notes.append(f"timers: {waited['pending']} still pending after {cap_ms} ms")
        return bool(waited.get("had"))

    async def _observe_settled(self, step: Step, deadline: float | None = None) -> tuple[bytes, str | None, CheckResult]:
        """(screenshot, fingerprint, checker verdict) of the page once it has settled.

        They are taken while the page settles, unless an animation runs as it starts to; if anything
        changed or moved after the action's own effects (`is_quiet_since_start`), they are taken again
        from the settled page.
        """
        page = self.page
        may_stand = await start_settling(page)
        cap_ms, motion_cap_ms = self._settle_caps(deadline)
        settling = asyncio.ensure_future(settle(page, self.config.settle_quiet_ms, cap_ms, motion_cap_ms))
        early = asyncio.ensure_future(self._observe()) if may_stand else None
        try:
            settled = await settling
        except BaseException:
            for pending in filter(None, (settling, early)):
                pending.cancel()
            raise
        _record_settling(step, settled, cap_ms, motion_cap_ms)
        timers_fired = await self._waited_for_timers(deadline, step)
        if timers_fired:
            # the app's timers fired after the page settled: their effects belong to this step
            step.timings.settle_waited_for.append("timers")
            await settle(page, self.config.settle_quiet_ms, cap_ms, motion_cap_ms)
        observed = None
        if early is not None and (timers_fired or not is_quiet_since_start(settled)):
            # The page changed after the early observation began (its timers fired, it navigated, moved,
            # or settled late): that observation is stale, so do not wait for it — on a page that navigated
            # it can take its full time limits, and the step's budget must cover the observation that counts.
            early.cancel()
            await asyncio.gather(early, return_exceptions=True)
        elif early is not None:
            try:
                observed = await early
            except ScreenshotTimeout:
                raise  # a hung renderer: asking again would only wait as long once more
            except Exception:
                observed = None
        if observed is None:
            observed = await self._observe()
        screenshot_ms, screenshot, fingerprint, (check, checker_ms) = observed
        step.timings.screenshot_ms = screenshot_ms
        step.timings.checker_ms = checker_ms
        return screenshot, fingerprint, check

    async def _observe(self) -> tuple[float, bytes, str | None, tuple[CheckResult, float]]:
        page = self.page
        started = time.perf_counter()
        screenshot, fingerprint, checked = await asyncio.gather(capture_png(page), page_fingerprint(page), self._check())
        return elapsed_ms(started), screenshot, fingerprint, checked

    async def _check(self) -> tuple[CheckResult, float]:
        """The checker's verdict on the page now, and how long it took; never raises."""
        if self.checker is None:
            return CheckResult(passed=False, reason="no checker"), 0.0
        limit = self.config.checker_timeout_s
        started = time.perf_counter()
        try:
            outcome = await asyncio.wait_for(self.checker(self.page), limit)
        except TimeoutError:  # asyncio.TimeoutError is TimeoutError since Python 3.11
            outcome = CheckResult(passed=False, reason=f"checker timed out after {limit:g} s")
        except Exception as exc:
            outcome = CheckResult(passed=False, reason=f"checker raised {describe_error(exc)}")
        if isinstance(outcome, bool):
            outcome = CheckResult(passed=outcome)
        elif not isinstance(outcome, CheckResult):
            outcome = CheckResult(passed=False, reason=f"checker returned {type(outcome).__name__}, not a CheckResult")
        return outcome, elapsed_ms(started)

    # ---- the context --------------------------------------------------------------------------

    async def _start_trace(self) -> None:
        if not self.config.trace:
            return
        try:
            await self._app.context.tracing.start(screenshots=True, snapshots=True)
            self.tracing = True
        except Exception as exc:
            self._app.events.page_error(f"trace not started: {describe_error(exc)}")

    async def _close_app(self, error: BaseException | None) -> None:
        """Leave `open_app` as an `async with` would: with the exception that is ending the episode, if any
        (a cancelled episode does not wait for the pop-ups still on their way)."""
        opened, self._opened = self._opened, None
        self.tracing = False
        if opened is not None:
            await opened.__aexit__(type(error) if error else None, error, error.__traceback__ if error else None)


def _record_settling(step: Step, settled: dict, cap_ms: int, motion_cap_ms: int) -> None:
    """What settling took and waited for, into the step's timings (and a note when it gave up)."""
    timings = step.timings
    timings.settle_ms = round(float(settled.get("ms") or 0.0), 2)
    timings.motion_ms = round(float(settled.get("motionMs") or 0.0), 2)
    timings.settle_waited_for = [str(what) for what in settled.get("waitedFor") or []]
    timings.settle_capped = bool(settled.get("capped"))
    if "error" in settled:
        step.notes.append(f"settle: {settled['error']}")
    elif timings.settle_capped:
        moved = {"scroll", "target", "target animation"} & set(timings.settle_waited_for)
        cap = motion_cap_ms if moved else cap_ms
        step.notes.append(f"settle: still changing after {cap} ms ({', '.join(timings.settle_waited_for) or 'no frame'})")


def describe_error(exc: BaseException) -> str:
    """`Type: first line of the message` (at most 300 characters of it), or just the type."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {text[:300]}" if text else type(exc).__name__


def elapsed_ms(started: float) -> float:
    """Milliseconds since `started` (a `time.perf_counter()` reading), to 0.01 ms."""
    return round((time.perf_counter() - started) * 1000, 2)
