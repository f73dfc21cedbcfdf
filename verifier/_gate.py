"""The validation gate: what a checker must show on the freshly loaded app before anyone trusts it.

A checker passes when it compiles, runs without error or timeout, leaves the DOM alone, reads
no app globals (it cannot see them: it runs in an isolated world), and is **false on the
initial state** — a checker already true at load measures nothing. Selectors it names that
are absent at load are a warning, not a rejection: the element may appear with the terminal
state (a "Saved!" banner).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path

from playwright.async_api import Page
from pydantic import BaseModel, Field

from cua import BrowserConfig, JavaScriptError, JavaScriptTimeout, isolated_world, open_app, settle

from ._checker import CheckerKind, CompiledChecker, compile_checker
from ._rules import RuleSyntaxError
from ._runtime import DEFAULT_TIMEOUT_MS, CheckerOutcome, run_checker_patiently

# `el.onanimationstart = …`, `el['onclick'] = …` (not `==`): the runtime refuses the handlers of
# user input at the call, and this refuses the rest (see _checker_wrapper.js) by the checker's text.
_HANDLER_ASSIGNMENT = re.compile(r"""(\.\s*on[a-z]+|\[\s*['"`]on[a-z]+['"`]\s*\])\s*=(?!=)""")
_ISOLATION_HINT = (
    "checkers run in an isolated world that sees the page's DOM but not the app's JavaScript "
    "variables; read the state from the DOM (text, values, attributes, classes) instead"
)

# A selector naming a state (`#plan.selected`, `#faq[open]`) is expected to match nothing at load;
# it counts as missing only if its element does not exist either (first simple selector of each
# compound: `#plan`, `#faq`).
_PROBE_JS = Path(__file__).with_name("_gate_probe.js").read_text(encoding="utf-8")


class GateResult(BaseModel):
    """The gate's decision on one checker, with every reason recorded."""

    accepted: bool
    kind: CheckerKind | None = Field(default=None, description="How the checker was written: 'js' or 'rule'.")
    javascript: str | None = Field(default=None, description="The JS body the runtime runs (compiled, for a rule).")
    reasons: list[str] = Field(default_factory=list, description="Why it was rejected; empty when accepted.")
    warnings: list[str] = Field(default_factory=list)
    missing_selectors: list[str] = Field(default_factory=list, description="Named selectors absent at load.")
    initial: CheckerOutcome | None = Field(default=None, description="The run on the freshly loaded page.")

    @property
    def reason(self) -> str:
        """The reasons as one sentence, for prompts and tables."""
        return "; ".join(self.reasons)


def precompile(checker: str | CompiledChecker, kind: CheckerKind | None = None) -> CompiledChecker | GateResult:
    """Compile a checker, or the rejection saying why it cannot be."""
    if isinstance(checker, CompiledChecker):
        return checker
    try:
        return compile_checker(checker, kind)
    except RuleSyntaxError as exc:
        return GateResult(accepted=False, reasons=[f"the rule does not parse: {exc.detail} (at position {exc.position})"],
                          kind="rule")
    except ValueError as exc:
        return GateResult(accepted=False, reasons=[str(exc)])


SLOW_RETRY_FACTOR = 4


async def gate_checker(
    page: Page,
    checker: str | CompiledChecker,
    *,
    kind: CheckerKind | None = None,
    timeout_ms: int = DEFAULT_TIMEOUT_MS,
) -> GateResult:
    """Judge one checker on `page`, which the caller has just loaded and settled.

    Never raises for anything the checker does; the page is left as it was unless the checker
    mutated it (then `initial.mutated_dom` is set and the caller should load a fresh page).
    """
    compiled = precompile(checker, kind)
    if isinstance(compiled, GateResult):
        return compiled
    outcome, slow_retry = await run_checker_patiently(page, compiled.javascript, timeout_ms, SLOW_RETRY_FACTOR)
    result = GateResult(accepted=False, kind=compiled.kind, javascript=compiled.javascript, initial=outcome)
    if slow_retry:
        result.warnings.append(f"needed more than {timeout_ms} ms on the loaded page (ran within {timeout_ms * SLOW_RETRY_FACTOR} ms on a retry)")
    missing, invalid, unseen = await _probe(page, compiled)
    result.missing_selectors = missing

    if not outcome.compiled:
        result.reasons.append(f"does not compile: {outcome.error}")
    elif outcome.timed_out:
        result.reasons.append(f"did not finish within {timeout_ms} ms, nor within {timeout_ms * SLOW_RETRY_FACTOR} ms on a retry "
                              f"(an endless loop?): {outcome.error}")
    elif outcome.mutated_dom:
        changed = ", ".join(outcome.changed_state) or "the DOM"
        result.reasons.append(f"changes {changed} when run; a checker may only read the page")
    elif outcome.error:
        result.reasons.append(_explain_error(outcome.error, compiled, bool(unseen)))
    elif outcome.passed:
        result.reasons.append(
            "is already true on the freshly loaded app, so it measures nothing; "
            "it must encode the task's end state, which the initial page does not show"
        )
    elif outcome.returned_type == "undefined" and not re.search(r"\breturn\b", compiled.javascript):
        result.reasons.append("returns nothing: the body has no `return` statement, so it can never be true")

    if handler := _HANDLER_ASSIGNMENT.search(compiled.javascript):
        result.reasons.append(
            f"assigns an event handler ({handler.group(1)}), which would run later, after the check; "
            "a checker may only read the page"
        )
    if unseen:
        names = ", ".join(f"window.{name}" for name in unseen)
        result.reasons.append(f"reads {names}, which the checker cannot see: {_ISOLATION_HINT}")
    result.warnings += [f"'{selector}' is not a valid CSS selector" for selector in invalid]
    result.warnings += [f"selector '{selector}' matches nothing on the loaded page" for selector in missing]
    if outcome.ok and outcome.returned_type not in ("boolean", "undefined", "null"):
        result.warnings.append(f"returns a {outcome.returned_type}, not a boolean; its truthiness is used")
    result.accepted = not result.reasons
    return result


def _explain_error(error: str, compiled: CompiledChecker, globals_reported: bool) -> str:
    if error.startswith("returned a Promise"):
        return error
    message = f"throws on the loaded app: {error}"
    undefined_name = re.match(r"ReferenceError: (\S+) is not defined", error)
    if undefined_name:
        return f"{message} — '{undefined_name.group(1)}' looks like an app variable; {_ISOLATION_HINT}"
    if "TypeError" in error and re.search(r"properties of null|reading '[^']*' of null|is null", error):
        return (
            f"{message} — an element it reads is missing on the loaded page; use optional chaining "
            "(`?.`) so a missing element gives false instead of an error"
        )
    if "TypeError" in error and compiled.window_names and not globals_reported:
        return f"{message} — it reads window properties ({', '.join(compiled.window_names)}); {_ISOLATION_HINT}"
    return message


async def _probe(page: Page, compiled: CompiledChecker) -> tuple[list[str], list[str], list[str]]:
    if not compiled.selectors and not compiled.window_names:
        return [], [], []
    try:
        found = await isolated_world(page).call(_PROBE_JS, compiled.selectors, compiled.window_names)
    except (JavaScriptError, JavaScriptTimeout):
        return [], [], []
    return list(found["missing"]), list(found["invalid"]), list(found["unseen"])


async def gate_checkers(
    html: str,
    checkers: Mapping[str, str | CompiledChecker],
    *,
    config: BrowserConfig | None = None,
    timeout_ms: int = DEFAULT_TIMEOUT_MS,
) -> dict[str, GateResult]:
    """Gate several checkers (key → checker) against a freshly loaded `html`.

    They share one loaded page while it stays pristine; after a checker that changed the DOM,
    timed out or threw, the app is loaded afresh so the next checker sees the initial state.
    """
    results: dict[str, GateResult] = {}
    pending = list(checkers.items())
    while pending:
        async with open_app(html, config) as app:
            await settle(app.page)
            while pending:
                key, checker = pending.pop(0)
                results[key] = result = await gate_checker(app.page, checker, timeout_ms=timeout_ms)
                if result.initial is not None and not result.initial.ok:
                    break
    return results
