"""The checker runtime: run an untrusted checker against the page, contained.

A checker is a JS function body that reads the DOM and returns a boolean (design.md §4). It runs
in an isolated world of its own, new for every run — the app's DOM is visible, the app's globals
are not, and nothing it leaves behind reaches the next run or the harness — is compiled with
`new Function` (so its text cannot escape the wrapper), is cut off at a time limit, and is
watched: a checker that changes the DOM (MutationObserver), form values, storage, cookies or the
URL is invalid — also when it does so after an `await`, as the check waits out the checker's
microtasks — and one that schedules work, fires events or navigates is refused at the call.
What it returns never travels back (only its truthiness and type), nor more than
MAX_MESSAGE_CHARS of what it throws.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from playwright.async_api import Page
from pydantic import Field, model_validator

from cua import CheckResult, JavaScriptError, JavaScriptTimeout, isolated_world

DEFAULT_TIMEOUT_MS = 1_000
MAX_MESSAGE_CHARS = 500  # a thrown 50 MB message must not travel back whole
DRAIN_TURNS = 100  # microtask turns a checker's `await` chains get to show their writes (< 0.1 ms)

# Runs in a world of its own, made for this one evaluation (`evaluate_in_new_world`): nothing the
# checker leaves on its globals outlives the call. Everything the wrapper needs after the checker
# has run is taken first, so a checker cannot blind it (replace `takeRecords`, `JSON.stringify`);
# APIs that schedule work for later, fire events, navigate or write state are refused in this
# world, because their effects would land after the mutation check (or outside the DOM).
_WRAPPER = Path(__file__).with_name("_checker_wrapper.js").read_text(encoding="utf-8")


class CheckerOutcome(CheckResult):
    """One evaluation of a checker (the `cua.CheckResult` a rollout reads, with the details).

    `passed` is False whenever anything went wrong, and `reason` then says what.
    """

    compiled: bool = True
    error: str | None = None
    timed_out: bool = False
    mutated_dom: bool = False
    changed_state: list[str] = Field(
        default_factory=list,
        description="What the checker changed, e.g. 'the DOM', 'form values', 'localStorage', 'cookies', 'URL'.",
    )
    returned_type: str | None = None
    elapsed_ms: float = 0.0

    @property
    def ok(self) -> bool:
        """Ran cleanly: compiled, no exception, no timeout, no change to the page."""
        return self.compiled and self.error is None and not self.timed_out and not self.mutated_dom

    @model_validator(mode="after")
    def _explain(self) -> CheckerOutcome:
        if self.reason is None:
            if not self.compiled:
                self.reason = f"does not compile: {self.error}"
            elif self.timed_out:
                self.reason = f"timed out: {self.error}"
            elif self.mutated_dom:
                what = ", ".join(self.changed_state) or "the DOM"
                self.reason = f"changes {what} (a checker must only read the page)"
            elif self.error:
                self.reason = f"throws: {self.error}"
        return self


async def run_checker(page: Page, checker: str, timeout_ms: int = DEFAULT_TIMEOUT_MS) -> CheckerOutcome:
    """Evaluate `checker` on `page`; never raises for anything the checker does."""
    started = time.perf_counter()
    # evaluate_in_new_world takes an expression (it has no `call`): the call, arguments as JSON.
    arguments = ", ".join(json.dumps(value) for value in (checker, MAX_MESSAGE_CHARS, DRAIN_TURNS))
    expression = f"({_WRAPPER})({arguments})"
    try:
        result = await isolated_world(page).evaluate_in_new_world(expression, timeout_ms=timeout_ms)
    except JavaScriptTimeout as exc:
        return CheckerOutcome(passed=False, timed_out=True, error=str(exc), elapsed_ms=_ms(started))
    except JavaScriptError as exc:
        return CheckerOutcome(passed=False, error=f"harness: {exc}", elapsed_ms=_ms(started))
    if not isinstance(result, dict):
        return CheckerOutcome(passed=False, error="harness: no result", elapsed_ms=_ms(started))
    changed = [part for part in str(result.get("changed") or "").split(", ") if part]
    mutated = bool(result.get("mutations")) or bool(changed)
    return CheckerOutcome(
        passed=bool(result.get("passed")) and not mutated,
        compiled=bool(result.get("compiled")),
        error=result.get("error"),
        mutated_dom=mutated,
        changed_state=(["the DOM"] if result.get("mutations") else []) + changed,
        returned_type=result.get("type"),
        elapsed_ms=_ms(started),
    )


PATIENT_RETRY_FACTOR = 3  # 1 s + 3 s stays inside a rollout's 5 s checker limit


async def run_checker_patiently(page: Page, checker: str, timeout_ms: int = DEFAULT_TIMEOUT_MS,
                                factor: int = PATIENT_RETRY_FACTOR) -> tuple[CheckerOutcome, bool]:
    """`run_checker`, and once more with `factor`× the limit if it timed out without touching the DOM.

    A busy page on a loaded machine can hold a checker that ends past its limit; an endless loop
    fails the longer limit too. Returns (outcome, whether only the patient retry finished).
    """
    outcome = await run_checker(page, checker, timeout_ms=timeout_ms)
    if not outcome.timed_out or outcome.mutated_dom:
        return outcome, False
    outcome = await run_checker(page, checker, timeout_ms=timeout_ms * factor)
    return outcome, not outcome.timed_out


def _ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 2)
