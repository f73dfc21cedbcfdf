"""From the verifier's judgement to the checker a rollout runs after every step (one route for all callers)."""

from __future__ import annotations

from playwright.async_api import Page

from cua import Checker

from ._checker import compile_checker
from ._runtime import DEFAULT_TIMEOUT_MS, CheckerOutcome, run_checker_patiently
from ._verdicts import Verdict


def rollout_checker(checker: Verdict | str | None, timeout_ms: int = DEFAULT_TIMEOUT_MS) -> Checker | None:
    """The `cua.Checker` a rollout calls after every step, or None when there is nothing to check.

    `checker` is a verdict (its gated checker; None when it has no valid one) or a checker's source,
    JS or rule (compiled here; a gated JS body compiles to itself). Every route to a rollout — the
    sweep's stages, `aui rollout`, the benchmarks — builds its checker here.

    Raises:
        RuleSyntaxError / ValueError: a source that does not compile.
    """
    if isinstance(checker, Verdict):
        checker = checker.checker if checker.valid else None
    if not checker:
        return None
    javascript = compile_checker(checker).javascript

    async def check(page: Page) -> CheckerOutcome:
        # The checker passed the gate, so it ends: a timeout is a page (or machine) too busy to
        # answer in time, and the step's verdict should not depend on that.
        return (await run_checker_patiently(page, javascript, timeout_ms))[0]

    return check
