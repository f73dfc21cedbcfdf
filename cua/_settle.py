"""Waiting for the page to settle after an action: by events, never by fixed sleeps.

Settled means: two animation frames have passed (layout and paint caught up) and the DOM has
been quiet for `quiet_ms`, or `cap_ms` has passed, whichever comes first. Runs in the harness's
isolated world so the app cannot disturb the measurement.
"""

from __future__ import annotations

from playwright.async_api import Page

from ._isolated import JavaScriptError, JavaScriptTimeout, isolated_world

_SETTLE_JS = """
(quietMs, capMs) => new Promise(resolve => {
  const start = performance.now();
  let last = start;
  let mutations = 0;
  const observer = new MutationObserver(records => { mutations += records.length; last = performance.now(); });
  observer.observe(document, {subtree: true, childList: true, attributes: true, characterData: true});
  const finish = () => { observer.disconnect(); resolve({ms: performance.now() - start, mutations}); };
  // rAF does not fire in a hidden or throttled page; the timer is the backstop for the cap.
  const backstop = setTimeout(finish, capMs);
  const tick = () => {
    const now = performance.now();
    if (now - last >= quietMs || now - start >= capMs) { clearTimeout(backstop); finish(); }
    else requestAnimationFrame(tick);
  };
  requestAnimationFrame(() => requestAnimationFrame(tick));
})
"""


async def settle(page: Page, quiet_ms: int = 60, cap_ms: int = 800) -> dict:
    """Wait until the page is settled; returns {"ms", "mutations"} or {"error"} if it never answered."""
    try:
        result = await isolated_world(page).call(_SETTLE_JS, quiet_ms, cap_ms, timeout_ms=cap_ms + 1_000)
        return result or {"ms": None, "mutations": 0}
    except (JavaScriptError, JavaScriptTimeout) as exc:
        return {"error": str(exc)}
