"""The checker runtime: run an untrusted checker against the page, contained.

A checker is a JS function body that reads the DOM and returns a boolean (design.md §4). It runs
in the harness's isolated world — the app's DOM is visible, the app's globals are not — is
compiled with `new Function` (so its text cannot escape the wrapper), is cut off at a time limit,
and is watched by a MutationObserver: a checker that changes the DOM is invalid.
"""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable

from playwright.async_api import Page
from pydantic import BaseModel

from cua import JavaScriptError, JavaScriptTimeout, isolated_world

DEFAULT_TIMEOUT_MS = 1_000

_WRAPPER = """
(() => {
  let fn;
  try { fn = new Function(%s); }
  catch (e) { return {compiled: false, error: String(e && e.message || e)}; }
  const observer = new MutationObserver(() => {});
  observer.observe(document, {subtree: true, childList: true, attributes: true, characterData: true});
  let value, error = null;
  try { value = fn(); } catch (e) { error = (e && e.name ? e.name + ': ' : '') + String(e && e.message || e); }
  // A promise is truthy; judging it would pass every async checker, so it is an error instead.
  if (error === null && value && typeof value.then === 'function') {
    error = 'returned a Promise: a checker must be synchronous and return a boolean';
    value = false;
  }
  const mutations = observer.takeRecords().length;
  observer.disconnect();
  const type = value === null ? 'null' : typeof value;
  return {compiled: true, passed: error === null && !!value, type, error, mutations};
})()
"""


class CheckerOutcome(BaseModel):
    """One evaluation of a checker. `passed` is False whenever anything went wrong."""

    passed: bool
    compiled: bool = True
    error: str | None = None
    timed_out: bool = False
    mutated_dom: bool = False
    returned_type: str | None = None
    elapsed_ms: float = 0.0

    @property
    def ok(self) -> bool:
        """Ran cleanly: compiled, no exception, no timeout, no DOM change."""
        return self.compiled and self.error is None and not self.timed_out and not self.mutated_dom

    @property
    def reason(self) -> str | None:
        if not self.compiled:
            return f"does not compile: {self.error}"
        if self.timed_out:
            return f"timed out: {self.error}"
        if self.mutated_dom:
            return "changes the DOM (a checker must only read it)"
        if self.error:
            return f"throws: {self.error}"
        return None


async def run_checker(page: Page, checker: str, timeout_ms: int = DEFAULT_TIMEOUT_MS) -> CheckerOutcome:
    """Evaluate `checker` on `page`; never raises for anything the checker does."""
    started = time.perf_counter()
    expression = _WRAPPER % json.dumps(checker)
    try:
        result = await isolated_world(page).evaluate(expression, timeout_ms=timeout_ms)
    except JavaScriptTimeout as exc:
        return CheckerOutcome(passed=False, timed_out=True, error=str(exc), elapsed_ms=_ms(started))
    except JavaScriptError as exc:
        return CheckerOutcome(passed=False, error=f"harness: {exc}", elapsed_ms=_ms(started))
    if not isinstance(result, dict):
        return CheckerOutcome(passed=False, error="harness: no result", elapsed_ms=_ms(started))
    mutated = bool(result.get("mutations"))
    return CheckerOutcome(
        passed=bool(result.get("passed")) and not mutated,
        compiled=bool(result.get("compiled")),
        error=result.get("error"),
        mutated_dom=mutated,
        returned_type=result.get("type"),
        elapsed_ms=_ms(started),
    )


def checker_callback(checker: str, timeout_ms: int = DEFAULT_TIMEOUT_MS) -> Callable[[Page], Awaitable[CheckerOutcome]]:
    """The `async (page) -> CheckerOutcome` a rollout calls after every step (`cua.Checker`).

    `checker` is the gated JS body (`Verdict.checker`, compiled already when written as a rule).
    """

    async def check(page: Page) -> CheckerOutcome:
        return await run_checker(page, checker, timeout_ms=timeout_ms)

    return check


def _ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 2)
