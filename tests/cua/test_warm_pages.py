"""A warm page reused for the next app keeps nothing of the last one (issue 28's proof of the reset,
issue 38's of what a caller sets).

`open_app` hands out pages that earlier apps used (`BrowserConfig.reuse_pages`), reset in between.
The proof: an app that writes every kind of state a page can keep (tests/cua/leaky_apps.py) runs in a
page, then a probe app reads all of it in the next page `open_app` hands out — which must be the
same page — and reports exactly what it reports in a fresh context. The probe is shown able to see
the leaks: in a page that is not reset, it reports them. Then each kind of state a *caller* can set on
the page or its context (a fake clock, routes, bindings, init scripts, headers, emulation, the viewport,
offline mode, permissions, a CDP session of its own, handlers, timeouts, a key held down): set on a
warm page, shown to the probe on that page, and gone for the next app `open_app` hands out.
"""

from __future__ import annotations

import asyncio
import json
import time

import pytest

import cua._browser
from commenter import collect_facts
from cua import (APP_URL, FIXED_CLOCK_START, Action, BrowserConfig, Point, RolloutConfig, Viewport, close_warm_pages, open_app,
                 rollout, settle)
from cua.policies import get_policy
from tests.cua.leaky_apps import LEAKY, PROBE

FRESH = BrowserConfig(reuse_pages=False)
WARM = BrowserConfig(reuse_pages=True)
PROBE_FILES = {"probe.json": b'{"served": "by the engine"}'}


@pytest.fixture(autouse=True)
def _resets_may_be_slow(monkeypatch):
    """A reset slower than `RESET_TIMEOUT_S` (3 s) closes the page instead of reusing it: right for a hung page,
    but a healthy reset on a loaded machine took longer once and failed a reuse test (2026-11-28). These tests
    prove which pages are reused, not how fast a reset is; with more time, a page not reused is so by decision."""
    monkeypatch.setattr(cua._browser, "RESET_TIMEOUT_S", 60.0)


@pytest.fixture(autouse=True)
async def _from_an_empty_pool():
    """Each test starts from an empty warm pool. A worker's tests share one event loop, and with it the pages its
    earlier tests gave back, and one of those may be at its last use (`WARM_PAGE_USES`): closed, not reset, when
    the test gives it back — not reused for a reason that is not what the test asks. Two reuse tests failed so in
    full-suite runs (2026-11-28 and 29; the page left at the leaky app's URL: no reset began), never alone."""
    await close_warm_pages()


def _now_ms() -> float:
    return time.time() * 1000


async def _report(page, since_ms: float | None = None, fixed_clock: bool = False) -> dict:
    """The probe's report; its clock reading becomes `clock`: "as expected" when it lies between the machine's
    clock before the app was opened (`since_ms`) and now — or, under the fixed clock, as far past
    `FIXED_CLOCK_START` as the machine's clock moved meanwhile — else how far off it was."""
    await page.wait_for_function("() => document.getElementById('report')?.textContent", timeout=10_000)
    report = json.loads(await page.text_content("#report"))
    async with page.expect_request("**/probe.json") as request:  # the headers the origin's requests carry now
        await page.evaluate("() => fetch('probe.json').catch(() => null)")
    report["x-headers"] = sorted(name for name in await (await request.value).all_headers() if name.startswith("x-"))
    now, until = report.pop("now"), _now_ms()
    if since_ms is not None:
        low, high = (FIXED_CLOCK_START.timestamp() * 1000, FIXED_CLOCK_START.timestamp() * 1000 + until - since_ms) \
            if fixed_clock else (since_ms, until)
        report["clock"] = "as expected" if low - 5 <= now <= high + 5 else f"off by {(now - high) / 1000:+.1f} s"
    return report


async def _leak(app) -> None:
    await app.page.wait_for_function("() => document.getElementById('done')?.textContent === 'leaked'", timeout=10_000)
    await app.page.mouse.move(400, 250)  # over the hover-styled element, where the probe has one too
    await settle(app.page)


async def test_the_probe_sees_what_a_page_that_is_not_reset_keeps():
    async with open_app(LEAKY, FRESH) as app:
        await _leak(app)
        reference = None
        async with open_app(PROBE, FRESH) as fresh:
            reference = await _report(fresh.page)
        app.files["index.html"] = PROBE.encode()  # the same page, navigated to the probe without a reset
        await app.page.goto(APP_URL)
        kept = await _report(app.page)
    leaked = {key for key in reference if reference[key] != kept[key]}
    assert {"localStorage", "sessionStorage", "cookie", "indexedDB", "caches", "windowName", "historyLength"} <= leaked, kept


async def test_a_reused_page_shows_the_next_app_exactly_what_a_fresh_context_shows():
    """The leaky app ran with one seed and the fixed clock; the probe, with another seed and the machine's clock,
    must draw its own seed's numbers and read the machine's time — a seed or clock left behind would show."""
    since = _now_ms()
    async with open_app(PROBE, FRESH, PROBE_FILES, seed=5) as fresh:
        reference = await _report(fresh.page, since)
    async with open_app(LEAKY, WARM, seed=3, fixed_clock=True) as leaky:
        await _leak(leaky)
        used = leaky.page
    since = _now_ms()
    async with open_app(PROBE, WARM, PROBE_FILES, seed=5) as probe:
        assert probe.page is used, "the pool handed out another page: this test would prove nothing"
        report = await _report(probe.page, since)
        assert probe.events.blocked_requests == [] and probe.events.page_errors == [], "the last app's log stayed behind"
    assert report == reference and report["clock"] == "as expected" and report["pwClock"] == "undefined"


async def test_a_page_whose_app_raised_or_opened_another_page_is_not_reused():
    try:
        async with open_app(PROBE, WARM) as app:
            raised = app.page
            raise RuntimeError("the caller failed")
    except RuntimeError:
        pass
    async with open_app(PROBE, WARM) as app:
        assert app.page is not raised and raised.is_closed()
        opener = app.page
        await opener.evaluate("() => window.open('about:blank')")
        await settle(opener)
    async with open_app(PROBE, WARM) as app:
        assert app.page is not opener


# ---- what a caller sets on the page or its context (issue 38 §1) ---------------------------------------------------

async def _dismiss(dialog) -> None:
    await dialog.dismiss()


async def _own_cdp_session(app) -> None:
    session = await app.context.new_cdp_session(app.page)
    await session.send("Emulation.setTimezoneOverride", {"timezoneId": "Asia/Tokyo"})


async def _clock_an_hour_on(app) -> None:
    await app.page.clock.install()
    await app.page.clock.fast_forward(60_000)


async def _serve(route) -> None:
    await route.fulfill(status=200, body="served by the caller")


# name: (what the caller does, what the probe on the same page shows of it; None: nothing a page can read)
CALLER_STATES = {
    "fake clock": (_clock_an_hour_on, {"clock", "pwClock"}),
    "page route": (lambda app: app.page.route("**/probe.json", _serve), {"served"}),
    "context route": (lambda app: app.context.route("**/probe.json", _serve), {"served"}),
    "exposed function": (lambda app: app.page.expose_function("exposedByCaller", lambda: 1), {"globals"}),
    "context binding": (lambda app: app.context.expose_binding("boundByCaller", lambda source: 1), {"globals"}),
    "page init script": (lambda app: app.page.add_init_script("window.fromCallerScript = 1"), {"globals"}),
    "context init script": (lambda app: app.context.add_init_script("window.fromCallerScript = 2"), {"globals"}),
    "page headers": (lambda app: app.page.set_extra_http_headers({"x-from-caller": "1"}), {"x-headers"}),
    "context headers": (lambda app: app.context.set_extra_http_headers({"x-from-caller": "1"}), {"x-headers"}),
    "emulated media": (lambda app: app.page.emulate_media(media="print", color_scheme="dark", reduced_motion="reduce",
                                                          forced_colors="active"), {"media"}),
    "viewport size": (lambda app: app.page.set_viewport_size({"width": 800, "height": 600}), {"viewport"}),
    # Offline emulation leaves navigator.onLine true here, and the app's origin is served by interception anyway.
    "offline": (lambda app: app.context.set_offline(True), None),
    "permissions": (lambda app: app.context.grant_permissions(["geolocation", "notifications"]), {"permissions"}),
    "geolocation": (lambda app: app.context.set_geolocation({"latitude": 48.85, "longitude": 2.35}), None),
    "own CDP session": (_own_cdp_session, None),
    "dialog handler": (lambda app: app.page.on("dialog", _dismiss), None),
    "context page handler": (lambda app: app.context.on("page", lambda page: None), None),
    "default timeouts": (lambda app: (app.page.set_default_timeout(1), app.context.set_default_navigation_timeout(1)),
                         None),
    "key held down": (lambda app: app.page.keyboard.down("Shift"), None),
}


@pytest.mark.parametrize("state", list(CALLER_STATES))
async def test_what_a_caller_sets_on_a_warm_page_never_reaches_the_next_app(state):
    set_state, shows = CALLER_STATES[state]
    since = _now_ms()
    async with open_app(PROBE, FRESH, PROBE_FILES, seed=5) as fresh:
        reference = await _report(fresh.page, since)
    async with open_app(PROBE, WARM, PROBE_FILES, seed=5) as app:
        since = _now_ms()
        done = set_state(app)
        if asyncio.iscoroutine(done):
            await done
        if shows is not None:  # the probe sees the state on the page it was set on: else this test proves nothing
            await app.page.goto(APP_URL)
            seen = await _report(app.page, since)
            assert {key for key in reference if seen.get(key) != reference[key]} >= shows, seen
        used = app.page
    since = _now_ms()
    async with open_app(PROBE, WARM, PROBE_FILES, seed=5) as probe:
        report = await _report(probe.page, since)
        assert probe.page is not used, f"a page the caller set {state} on was reused"
        await probe.page.wait_for_function("() => new Promise(done => setTimeout(() => done(true), 50))")
    assert report == reference and report["clock"] == "as expected" and report["pwClock"] == "undefined"
    assert used.is_closed()


async def test_a_page_the_caller_only_read_and_acted_on_is_reused():
    """The watch must not close every page: reading the page and acting on it as a user does leaves nothing."""
    async with open_app(PROBE, WARM, PROBE_FILES, seed=5) as app:
        await _report(app.page)
        await app.page.mouse.click(400, 250)
        await app.page.keyboard.press("Shift+A")
        await app.page.screenshot()
        used = app.page
    async with open_app(PROBE, WARM, PROBE_FILES, seed=5) as probe:
        assert probe.page is used, f"not reused: closed {used.is_closed()}, at {used.url}"


async def test_the_commenters_replay_under_a_fake_clock_leaves_the_next_rollout_a_clean_page(tmp_path):
    """The offline commenter replays a trajectory under Playwright's fake clock on a warm page; a rollout in the
    same worker right after it must meet the machine's clock and no fake-clock machinery."""
    viewport = Viewport(width=1280, height=720)
    since = _now_ms()
    async with open_app(PROBE, FRESH, PROBE_FILES, seed=5) as fresh:
        reference = await _report(fresh.page, since)
    rolled = await rollout(PROBE, "look", get_policy("scripted", script=[Action(kind="click", point=Point(x=400, y=250))]),
                           None, tmp_path / "before", RolloutConfig(max_steps=2))
    facts = await collect_facts(PROBE, rolled, use_axe=False)
    assert not any("replay" in note for note in facts.notes), facts.notes  # the replay ran, with its fake clock
    seen: list[dict] = []

    async def read_report(page):
        seen.append(await _report(page, since))
        return True

    since = _now_ms()
    await rollout(PROBE, "look", get_policy("scripted", script=[]), read_report, tmp_path / "after",
                  RolloutConfig(max_steps=1, browser=BrowserConfig(viewport=viewport)), extra_files=PROBE_FILES, seed=5)
    assert seen and seen[0] == reference and seen[0]["pwClock"] == "undefined"
