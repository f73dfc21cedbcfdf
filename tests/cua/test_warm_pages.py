"""A warm page reused for the next app keeps nothing of the last one (issue 28's proof of the reset).

`open_app` hands out pages that earlier apps used (`BrowserConfig.reuse_pages`), reset in between.
The proof: an app that writes every kind of state a page can keep (tests/cua/leaky_apps.py) runs in a
page, then a probe app reads all of it in the next page `open_app` hands out — which must be the
same page — and reports exactly what it reports in a fresh context. The probe is shown able to see
the leaks: in a page that is not reset, it reports them.
"""

from __future__ import annotations

import json

from cua import APP_URL, BrowserConfig, open_app, settle
from tests.cua.leaky_apps import LEAKY, PROBE

FRESH = BrowserConfig(reuse_pages=False)
WARM = BrowserConfig(reuse_pages=True)


async def _report(page) -> dict:
    await page.wait_for_function("() => document.getElementById('report')?.textContent", timeout=10_000)
    return json.loads(await page.text_content("#report"))


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
    async with open_app(PROBE, FRESH) as fresh:
        reference = await _report(fresh.page)
    async with open_app(LEAKY, WARM, seed=3, fixed_clock=True) as leaky:
        await _leak(leaky)
        used = leaky.page
    async with open_app(PROBE, WARM) as probe:
        assert probe.page is used, "the pool handed out another page: this test would prove nothing"
        report = await _report(probe.page)
        assert probe.events.blocked_requests == [] and probe.events.page_errors == [], "the last app's log stayed behind"
    assert report == reference


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
