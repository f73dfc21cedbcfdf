"""Proving a checker or an answer check: replay a selector-level solution on a fresh page, then read it.

The gate shows a checker is false at load; only a replay shows it can turn true. One replay
serves every caller: the spec proofs of `aui apps validate` (`prove_task`), the offline
verifier's reference checkers and the model verifier's checkers. Each proof loads the app in a
fresh browser context, gates the checker there, replays the steps (the page settles after each)
and runs the checker again. Proofs mostly wait on the page, so a few run at once on the one
browser — at most PROOF_CONCURRENCY per event loop, however many verifiers ask.

An answer check cannot be run before an agent answers, so what is proven instead is that an agent
*could* answer: after the same replay, the page's visible text (`document.body.innerText`, read in
the harness's isolated world, so the app's scripts cannot change what is read; form fields' values
and hidden elements are not part of it) shows the expected answer (`answer_on_page`).

Solutions act through selectors (a spec author's or the verifier's shortcut); agents never do.
"""

from __future__ import annotations

import asyncio
import re
import time
import weakref
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import Literal, TypeVar

from playwright.async_api import Page
from pydantic import BaseModel, Field

from apps_prompts import AnswerCheck, SolutionStep
from cua import BrowserConfig, JavaScriptError, JavaScriptTimeout, isolated_world, open_app, settle

from ._answers import answer_on_page
from ._checker import CompiledChecker
from ._gate import GateResult, gate_checker, gate_checkers, precompile
from ._runtime import DEFAULT_TIMEOUT_MS, CheckerOutcome, run_checker_patiently

ProofStatus = Literal["proven", "claimed", "unsupported"]
"""proven: passes the gate and is true after its solution's replay; claimed: passes the gate,
not proven; unsupported: no checker that passes the gate."""

STEP_TIMEOUT_MS = 10_000  # an upper bound: a loaded machine is slow, a wrong selector still fails
WAIT_DEFAULT_S = 10.0
PROOF_TIMEOUT_S = 90.0  # the whole replay: a solution may wait out a timer, never hold a verifier
PROOF_CONCURRENCY = 4
MAX_PROBED_SELECTORS = 6
PROBED_TEXT_CHARS = 80
_BLOCKING = re.compile(r"\bis not\b|intercepts pointer events|outside of the viewport|not attached")
_PROBE_JS = Path(__file__).with_name("_proof_probe.js").read_text(encoding="utf-8")
PAGE_TEXT_MAX_CHARS = 200_000
PAGE_TEXT_TIMEOUT_MS = 5_000
_PAGE_TEXT_JS = "(max) => ((document.body && document.body.innerText) || '').slice(0, max)"

Key = TypeVar("Key")
Value = TypeVar("Value")


class StepFailure(BaseModel):
    """The solution step that could not be carried out, and why."""

    number: int = Field(description="1-based position of the step in the solution.")
    step: SolutionStep
    error: str

    def __str__(self) -> str:
        return f"solution step {self.number} ({self.step.action} {self.step.selector}) failed: {self.error}"


class Replay(BaseModel):
    """One replay of a solution on a fresh page, as far as it got (a checker's proof and an answer's share it)."""

    steps: int = Field(default=0, description="How many steps the solution has.")
    failed_step: StepFailure | None = None
    timed_out: bool = Field(default=False, description="The replay ran out of its time (PROOF_TIMEOUT_S).")
    elapsed_ms: float = 0.0

    def cut_short(self) -> str | None:
        """Why the replay did not reach the solution's end, in one sentence; None when it did."""
        if self.failed_step is not None:
            return str(self.failed_step)
        if self.timed_out:
            return f"the replay of the {self.steps}-step solution did not finish within its time limit"
        return None


Proof = TypeVar("Proof", bound=Replay)


class SolutionProof(Replay):
    """One replay of a solution on a fresh page, and what the checker said after it."""

    proven: bool = False
    final: CheckerOutcome | None = Field(default=None, description="The checker's run after the replay.")
    after: list[str] = Field(default_factory=list, description="What the elements the checker reads showed after the replay.")

    @property
    def reason(self) -> str:
        """What the proof showed, in one sentence (for the verdict and the repair message)."""
        if self.proven:
            return f"the checker was false at load and true after replaying the {self.steps}-step solution"
        if (cut_short := self.cut_short()) is not None:
            return cut_short
        if self.final is None:
            return "the checker was not run after the replay"
        if not self.final.ok:
            return f"after the replay of the {self.steps}-step solution the checker {self.final.reason}"
        kind = self.final.returned_type
        value = "false" if kind in (None, "boolean") else kind if kind in ("null", "undefined") else f"a falsy {kind}"
        shown = f"; after the replay {'; '.join(self.after)}" if self.after else ""
        return f"the checker returned {value} after the replay of the {self.steps}-step solution{shown}"


class AnswerProof(Replay):
    """One replay of a solution on a fresh page, and whether the expected answer could be read after it."""

    shown: bool = Field(default=False, description="The expected answer is in the page's visible text after the replay.")
    detail: str = Field(default="", description="What the page's text showed, or why it could not be read.")

    @property
    def reason(self) -> str:
        """What the proof showed, in one sentence (for the verdict, `aui apps validate` and the repair message)."""
        if (cut_short := self.cut_short()) is not None:
            return cut_short
        after = f"after the {self.steps}-step solution" if self.steps else "at load (no solution steps)"
        return f"{self.detail} {after}" if self.detail else f"the page's text was not read {after}"


async def replay_step(page: Page, step: SolutionStep, step_timeout_ms: int = STEP_TIMEOUT_MS) -> None:
    """Carry out one step on the first element matching its selector; raises what Playwright raises."""
    locator = page.locator(step.selector).first
    match step.action:
        case "click" | "dblclick" | "hover" | "check":  # the locator's method of that name
            await getattr(locator, step.action)(timeout=step_timeout_ms)
        case "fill" | "press":
            await getattr(locator, step.action)(step.value or "", timeout=step_timeout_ms)
        case "wait":
            # for what the app does by itself (a timer running out): wait on the app's state, not a clock
            seconds = float(step.value) if step.value is not None else WAIT_DEFAULT_S
            await locator.wait_for(state="visible", timeout=seconds * 1000)
        case "select":
            await locator.select_option(step.value, timeout=step_timeout_ms)


async def replay_solution(
    page: Page, solution: Sequence[SolutionStep], step_timeout_ms: int = STEP_TIMEOUT_MS, *, settle_each: bool = True
) -> StepFailure | None:
    """Replay `solution` on `page`; the first step that failed, or None.

    With `settle_each` the page settles after every step (as an agent's step would); without it,
    only Playwright's own actionability waits (visible, stable, enabled) stand between steps.
    """
    for number, step in enumerate(solution, start=1):
        try:
            await replay_step(page, step, step_timeout_ms)
        except Exception as exc:  # whatever Playwright says about the step is the proof's answer
            return StepFailure(number=number, step=step, error=await _explain_step_error(page, step, exc))
        if settle_each:
            await settle(page)
    return None


async def replay_twice(
    html: str,
    solution: Sequence[SolutionStep],
    proof_type: type[Proof],
    read: Callable[[Page, Proof], Awaitable[bool]],
    *,
    config: BrowserConfig | None,
    step_timeout_ms: int,
    proof_timeout_s: float,
    before: Callable[[Page], Awaitable[bool]] | None = None,
) -> Proof | None:
    """Replay `solution` on a freshly loaded `html` within `proof_timeout_s`; when every step was carried out,
    `read` the settled page into the proof (True: it shows what it should). `before` runs on the loaded page
    first and may call the replay off (None). Never raises for anything the solution does.

    Settling after every step is most of a proof's time (CSS transitions) and rarely needed:
    Playwright waits for each target to be actionable. So the first replay settles only at the
    end; a proof still failing after it (a debounced input, a list re-rendered under the next
    click) earns a second, careful replay on a fresh page, settling after every step. A step
    that failed is not retried: Playwright already waited its full timeout for the element.
    """
    for settle_each in (False, True):
        proof = proof_type(steps=len(solution))
        async with open_app(html, config) as app:
            await settle(app.page)
            if before is not None and not await before(app.page):
                return None
            started = time.perf_counter()
            try:
                async with asyncio.timeout(proof_timeout_s):
                    proof.failed_step = await replay_solution(app.page, solution, step_timeout_ms, settle_each=settle_each)
                    if proof.failed_step is None and not settle_each:
                        await settle(app.page)  # the end state that is read: settled, as after an agent's step
            except TimeoutError:
                proof.timed_out = True
            holds = proof.cut_short() is None and await read(app.page, proof)
            proof.elapsed_ms = round((time.perf_counter() - started) * 1000, 1)
        if holds or proof.cut_short() is not None or not solution:
            break
    return proof


async def gate_and_prove(
    html: str,
    checker: str | CompiledChecker,
    solution: Sequence[SolutionStep],
    *,
    config: BrowserConfig | None = None,
    timeout_ms: int = DEFAULT_TIMEOUT_MS,
    step_timeout_ms: int = STEP_TIMEOUT_MS,
    proof_timeout_s: float = PROOF_TIMEOUT_S,
) -> tuple[GateResult, SolutionProof | None]:
    """Load `html` in a fresh context, gate the checker, and if it passes replay `solution` and check again.

    The proof is None when the checker failed the gate or there is no solution to replay.
    """
    compiled = precompile(checker)
    if isinstance(compiled, GateResult):
        return compiled, None
    gates: list[GateResult] = []  # each replay gates the checker on its own fresh page; the last gate is kept

    async def gate(page: Page) -> bool:
        gates.append(await gate_checker(page, compiled, timeout_ms=timeout_ms))
        return gates[-1].accepted and bool(solution)

    async def check(page: Page, proof: SolutionProof) -> bool:
        proof.final, _ = await run_checker_patiently(page, compiled.javascript, timeout_ms)
        proof.proven = proof.final.passed
        if not proof.proven:
            proof.after = await _what_it_reads(page, compiled.selectors)
        return proof.proven

    proof = await replay_twice(html, solution, SolutionProof, check, config=config, step_timeout_ms=step_timeout_ms,
                               proof_timeout_s=proof_timeout_s, before=gate)
    return gates[-1], proof


async def gate_on_fresh_app(
    html: str,
    checker: str | CompiledChecker,
    *,
    config: BrowserConfig | None = None,
    timeout_ms: int = DEFAULT_TIMEOUT_MS,
) -> GateResult:
    """Load `html` in a fresh context and gate one checker on it (`gate_and_prove` with nothing to replay)."""
    gate, _ = await gate_and_prove(html, checker, (), config=config, timeout_ms=timeout_ms)
    return gate


async def page_text(page: Page, max_chars: int = PAGE_TEXT_MAX_CHARS) -> str:
    """The page's visible text, read in the harness's isolated world (at most `max_chars` characters).

    Raises JavaScriptError / JavaScriptTimeout when the page cannot be read.
    """
    text = await isolated_world(page).call(_PAGE_TEXT_JS, max_chars, timeout_ms=PAGE_TEXT_TIMEOUT_MS)
    return str(text or "").encode("utf-16", "surrogatepass").decode("utf-16", "replace")


async def prove_answer(
    html: str,
    check: AnswerCheck,
    solution: Sequence[SolutionStep],
    *,
    config: BrowserConfig | None = None,
    step_timeout_ms: int = STEP_TIMEOUT_MS,
    proof_timeout_s: float = PROOF_TIMEOUT_S,
) -> AnswerProof:
    """Load `html` fresh, replay `solution` (may be empty: the answer shows at load), read the page's text
    (twice, as `replay_twice` says). Never raises for anything the solution or the page does; raises only
    what the browser raises (a context that cannot be opened)."""

    async def read(page: Page, proof: AnswerProof) -> bool:
        try:
            result = answer_on_page(await page_text(page), check)
            proof.shown, proof.detail = result.passed, result.reason
        except (JavaScriptError, JavaScriptTimeout) as error:
            proof.detail = f"the page's text could not be read ({error})"
        return proof.shown

    async with proof_slots():
        return await replay_twice(html, solution, AnswerProof, read, config=config, step_timeout_ms=step_timeout_ms,
                                  proof_timeout_s=proof_timeout_s)


async def gate_and_prove_all(
    html: str,
    checkers: Mapping[Key, tuple[str | CompiledChecker, Sequence[SolutionStep]]],
    *,
    config: BrowserConfig | None = None,
    timeout_ms: int = DEFAULT_TIMEOUT_MS,
    step_timeout_ms: int = STEP_TIMEOUT_MS,
    proof_timeout_s: float = PROOF_TIMEOUT_S,
) -> dict[Key, tuple[GateResult, SolutionProof | None]]:
    """Gate and prove several checkers (key → (checker, solution)) against `html`, in the order given.

    A checker with a solution gets a fresh page of its own (at most PROOF_CONCURRENCY in flight);
    those without one are gated together on shared pages, as `gate_checkers` does.
    Raises only what the browser raises (a context that cannot be opened).
    """
    results: dict[Key, tuple[GateResult, SolutionProof | None]] = {}
    unsolved: dict[Key, CompiledChecker] = {}
    to_prove: dict[Key, tuple[CompiledChecker, Sequence[SolutionStep]]] = {}
    for key, (checker, solution) in checkers.items():
        compiled = precompile(checker)
        if isinstance(compiled, GateResult):
            results[key] = (compiled, None)
        elif solution:
            to_prove[key] = (compiled, solution)
        else:
            unsolved[key] = compiled
    if unsolved:
        gates = await gate_checkers(html, unsolved, config=config, timeout_ms=timeout_ms)
        results.update({key: (gate, None) for key, gate in gates.items()})

    async def prove(compiled: CompiledChecker, solution: Sequence[SolutionStep]):
        async with proof_slots():
            return await gate_and_prove(html, compiled, solution, config=config, timeout_ms=timeout_ms,
                                        step_timeout_ms=step_timeout_ms, proof_timeout_s=proof_timeout_s)

    results.update(await run_all({key: prove(*item) for key, item in to_prove.items()}))
    return {key: results[key] for key in checkers}


async def run_all(coroutines: Mapping[Key, Awaitable[Value]]) -> dict[Key, Value]:
    """Await every coroutine at once (key → its result) in a TaskGroup, not gather: when one fails (the browser,
    a model call), the others are cancelled, not orphaned, and the first failure is raised as itself."""
    try:
        async with asyncio.TaskGroup() as group:
            running = {key: group.create_task(coroutine) for key, coroutine in coroutines.items()}
    except BaseExceptionGroup as failures:
        raise failures.exceptions[0] from None
    return {key: task.result() for key, task in running.items()}


_SLOTS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = weakref.WeakKeyDictionary()


def proof_slots() -> asyncio.Semaphore:
    """The running loop's bound on proofs in flight (a semaphore belongs to one loop)."""
    return _SLOTS.setdefault(asyncio.get_running_loop(), asyncio.Semaphore(PROOF_CONCURRENCY))


async def _explain_step_error(page: Page, step: SolutionStep, exc: Exception) -> str:
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    message = (lines[0] if lines else type(exc).__name__)[:200]
    if "Timeout" not in message:
        return message
    try:
        found = await page.locator(step.selector).count()
    except Exception:
        return message
    if found == 0:
        return f"{message} — no element matches '{step.selector}' on the page at that point"
    if step.action == "wait":
        return f"{message} — '{step.selector}' matches {found} element(s), but the first did not become visible in time"
    # Playwright's call log says what it was still waiting for ("element is not visible", "… intercepts pointer events").
    blocking = next((line.lstrip("- ") for line in reversed(lines) if _BLOCKING.search(line)), "could not be acted on")
    return f"{message} — '{step.selector}' matches {found} element(s), but for the first: {blocking}"[:400]


async def _what_it_reads(page: Page, selectors: Sequence[str]) -> list[str]:
    if not selectors:
        return []
    try:
        found = await isolated_world(page).call(_PROBE_JS, list(selectors[:MAX_PROBED_SELECTORS]), PROBED_TEXT_CHARS)
    except (JavaScriptError, JavaScriptTimeout):
        return []
    described = []
    for item in found or []:
        selector = item.get("selector")
        if item.get("invalid"):
            described.append(f"'{selector}' is not a valid CSS selector")
        elif not item.get("count"):
            described.append(f"'{selector}' matches nothing")
        else:
            control = item.get("value") is not None  # a form control: its value is what it shows
            parts = [f"value '{item['value']}'" if control else f"text '{item.get('text', '')}'"]
            if item.get("checked") is not None:
                parts.append("checked" if item["checked"] else "not checked")
            if item.get("hidden"):
                parts.append("not visible")
            described.append(f"'{selector}' shows {', '.join(parts)}")
    return described
