"""Hostile checkers: each is contained by the runtime with a clear verdict, and the page stays usable.

A checker is model-written JavaScript run against the app after every step. Whatever it does —
loop, recurse, throw, mutate, return 50 MB, read app globals, return a Promise, try to break out
of its wrapper or keep state between runs — the runtime must answer with a `CheckerOutcome` that
says what happened, the gate must reject it with a reason, and the page must work afterwards.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass

import pytest

from cua import isolated_world, open_app, page_fingerprint, settle
from verifier import CheckerOutcome, gate_checker, run_checker

APP = """<!doctype html><head><title>Counter</title></head><body style="margin:0">
<button id="go" style="position:absolute;left:20px;top:20px;width:120px;height:40px">Go</button>
<span id="n" style="position:absolute;left:200px;top:30px">0</span>
<input id="name" value="Ada" style="position:absolute;left:20px;top:100px">
<script>
  window.appState = {score: 3};
  document.getElementById('go').onclick = () => {
    const n = document.getElementById('n'); n.textContent = String(+n.textContent + 1);
  };
</script></body>"""
GO = (80, 40)
COUNT_IS = "return document.querySelector('#n').textContent === '{}';"
FIFTY_MB = "50 * 1024 * 1024"


@dataclass(frozen=True)
class HostileChecker:
    name: str
    source: str
    verdict: Callable[[CheckerOutcome], bool]  # what the runtime must say
    gate_reason: str | None  # a substring of the gate's rejection; None: harmless, so accepted


def timed_out(outcome: CheckerOutcome) -> bool:
    return outcome.timed_out and not outcome.passed and "timed out" in outcome.reason


def throws(fragment: str) -> Callable[[CheckerOutcome], bool]:
    return lambda o: not o.passed and o.error is not None and fragment in o.error and o.reason.startswith("throws")


def changes(what: str) -> Callable[[CheckerOutcome], bool]:
    return lambda o: not o.passed and o.mutated_dom and what in o.changed_state and what in o.reason


def truthy(kind: str) -> Callable[[CheckerOutcome], bool]:
    # The value never travels back: only its truthiness and type do.
    return lambda o: o.passed and o.ok and o.returned_type == kind


def plainly_false(outcome: CheckerOutcome) -> bool:
    return not outcome.passed and outcome.ok


HOSTILE_CHECKERS = [
    HostileChecker("endless_loop", "while (true) {}", timed_out, "did not finish"),
    HostileChecker("endless_recursion", "const f = () => f(); return f();", throws("RangeError"), "throws"),
    HostileChecker("getter_trap_in_thrown_value", "throw {get name() { throw 1; }, get message() { while (true) {} }};",
                   timed_out, "did not finish"),
    HostileChecker("throws_error", "throw new Error('boom');", throws("Error: boom"), "Error: boom"),
    HostileChecker("throws_null", "throw null;", throws("null"), "throws"),
    HostileChecker("sets_text", "document.querySelector('#n').textContent = '1'; return true;", changes("the DOM"),
                   "changes the DOM"),
    HostileChecker("assignment_typo_on_a_field", "return document.querySelector('#name').value = '';",
                   changes("form values"), "changes form values"),
    HostileChecker("clicks_the_app", "document.querySelector('#go').click(); return true;", throws("click is not allowed"),
                   "click is not allowed"),
    HostileChecker("huge_string", f"return 'x'.repeat({FIFTY_MB});", truthy("string"), "already true"),
    HostileChecker("huge_error_message", f"throw new Error('x'.repeat({FIFTY_MB}));",
                   lambda o: throws("Error: xxx")(o) and len(o.error) < 1_000, "throws"),
    HostileChecker("deep_object", "let o = {}; for (let i = 0; i < 100000; i++) o = {o}; return o;", truthy("object"),
                   "already true"),
    HostileChecker("cyclic_object", "const o = {}; o.self = o; return o;", truthy("object"), "already true"),
    HostileChecker("reads_app_global", "return window.appState.score === 3;", throws("TypeError"), "cannot see"),
    HostileChecker("reads_bare_app_global", "return appState.score === 3;", throws("ReferenceError"), "app variable"),
    HostileChecker("returns_promise", "return Promise.resolve(true);", throws("returned a Promise"), "returned a Promise"),
    HostileChecker("returns_async_result", "return (async () => true)();", throws("returned a Promise"),
                   "returned a Promise"),
    HostileChecker("returns_trapped_thenable", "return {get then() { throw new Error('gotcha'); }};",
                   throws("returned a Promise"), "returned a Promise"),
    # -- attempts to get out of the `new Function` wrapper, or to outlive it --------------------------
    HostileChecker("breaks_out_of_the_body", "}); document.title = 'pwned'; (function () {",
                   lambda o: not o.compiled and not o.passed and "does not compile" in o.reason, "does not compile"),
    HostileChecker("reaches_for_the_real_global", "return Function('return this')().appState !== undefined;",
                   plainly_false, None),
    HostileChecker("blinds_the_mutation_observer",
                   "MutationObserver.prototype.takeRecords = () => []; document.querySelector('#n').textContent = '9'; return true;",
                   changes("the DOM"), "changes the DOM"),
    HostileChecker("blinds_the_serialiser",
                   "JSON.stringify = () => '[]'; Object.entries = () => []; sessionStorage.seen = '1'; return false;",
                   changes("sessionStorage"), "changes sessionStorage"),
    HostileChecker("schedules_a_mutation", "setTimeout(() => { document.body.innerHTML = 'pwned'; }, 0); return false;",
                   throws("setTimeout is not allowed"), "setTimeout"),
    HostileChecker("queues_a_microtask",
                   "Promise.resolve().then(() => { document.body.dataset.x = '1'; }); return false;",
                   throws("then is not allowed"), "then"),
    HostileChecker("swallows_the_refusal",
                   "try { setInterval(() => { document.body.innerHTML = ''; }, 10); } catch (e) {} return false;",
                   throws("used setInterval"), "setInterval"),
    HostileChecker("listens_for_the_agent",
                   "document.addEventListener('click', () => { document.body.dataset.clicked = '1'; }); return false;",
                   throws("addEventListener is not allowed"), "addEventListener"),
    HostileChecker("hijacks_onclick", "document.querySelector('#go').onclick = () => {}; return false;",
                   throws("onclick is not allowed"), "onclick"),
    HostileChecker("hijacks_a_rarer_handler", "document.querySelector('#go').onanimationstart = () => {}; return false;",
                   plainly_false, "assigns an event handler (.onanimationstart)"),
    HostileChecker("writes_after_an_await",
                   "(async () => { await null; await null; document.querySelector('#n').textContent = '7'; })(); return false;",
                   changes("the DOM"), "changes the DOM"),
    HostileChecker("stores_after_an_await", "(async () => { await 0; localStorage.seen = '1'; })(); return false;",
                   changes("localStorage"), "changes localStorage"),
    HostileChecker("observes_resizes",
                   "new ResizeObserver(() => { document.body.dataset.x = '1'; }).observe(document.body); return false;",
                   throws("ResizeObserver is not allowed"), "ResizeObserver"),
    HostileChecker("navigates", "history.pushState({}, '', '/elsewhere'); return false;", throws("pushState"), "pushState"),
    HostileChecker("changes_the_hash", "location.hash = 'step-2'; return false;", changes("URL"), "changes URL"),
    HostileChecker("sets_a_cookie", "document.cookie = 'seen=1'; return false;", throws("document.cookie"), "cookie"),
    HostileChecker("poisons_the_harness",
                   "globalThis.__aui = {settle: () => ({}), fingerprint: () => 'same'}; "
                   "Element.prototype.getBoundingClientRect = () => ({}); return false;",
                   plainly_false, None),
]


async def assert_page_still_usable(app) -> None:
    """The app answers a normal checker, a click still works and the harness still measures."""
    page = app.page
    assert (await run_checker(page, "return document.querySelector('#go') !== null;")).passed
    before = await run_checker(page, COUNT_IS.format("0"))
    count = 0 if before.passed else int(await page.evaluate("document.querySelector('#n').textContent"))
    fingerprint = await page_fingerprint(page)
    await page.mouse.click(*GO)
    settled = await settle(page)
    assert "error" not in settled
    assert await page_fingerprint(page) != fingerprint  # the harness world still sees changes
    after = await run_checker(page, COUNT_IS.format(count + 1))
    assert after.passed and after.ok, after
    assert await page.evaluate("window.appState.score") == 3  # the app's own state untouched
    assert await page.title() == "Counter"


@pytest.mark.parametrize("hostile", HOSTILE_CHECKERS, ids=lambda h: h.name)
async def test_hostile_checker_is_contained_judged_and_leaves_the_page_usable(hostile: HostileChecker):
    async with open_app(APP) as app:
        await settle(app.page)
        # The gate runs the checker once on the fresh page: that run is the runtime's verdict.
        result = await asyncio.wait_for(gate_checker(app.page, hostile.source, kind="js"), 60)
        assert hostile.verdict(result.initial), result.initial
        if hostile.gate_reason is None:
            assert result.accepted, result.reason
        else:
            assert not result.accepted and hostile.gate_reason in result.reason, result.reason
        await assert_page_still_usable(app)


async def test_a_checker_keeps_no_state_between_runs():
    # Passes the gate (false on the fresh app), then true from its second run on — unless every
    # run starts in a world of its own.
    stateful = "if (globalThis.seen) return true; globalThis.seen = true; return false;"
    async with open_app(APP) as app:
        outcomes = [await run_checker(app.page, stateful) for _ in range(3)]
        assert [o.passed for o in outcomes] == [False, False, False]
        assert all(o.ok for o in outcomes)


async def test_checker_cannot_keep_state_in_storage_either():
    stateful = "if (sessionStorage.getItem('seen')) return true; sessionStorage.setItem('seen', '1'); return false;"
    async with open_app(APP) as app:
        outcomes = [await run_checker(app.page, stateful) for _ in range(2)]
        assert not any(o.passed for o in outcomes)
        assert "setItem is not allowed" in outcomes[0].error
        assert await app.page.evaluate("sessionStorage.length") == 0


# Timers of one page fire in the order they are due, whichever JS world set them. A sentinel timer set
# after the checker ran, and due later than the checker's 0 ms timer would have been, proves by firing
# that the checker's timer would have fired by then; the control shows the same timer, left unrefused,
# does fire before such a sentinel.
SENTINEL = """new Promise(resolve => setTimeout(() => resolve({
  intact: document.querySelector('#go') !== null, control: document.body.dataset.control || null}), 50))"""


async def test_refused_timer_never_fires():
    async with open_app(APP) as app:
        world = isolated_world(app.page)
        outcome = await run_checker(
            app.page, "try { setTimeout(() => { document.body.innerHTML = 'pwned'; }, 0); } catch (e) {} return false;")
        assert not outcome.passed and "used setTimeout" in (outcome.error or ""), outcome
        assert await world.evaluate(SENTINEL) == {"intact": True, "control": None}
        assert await world.evaluate("document.querySelector('#go') !== null")
        # The control: the same 0 ms timer from a world of its own, not refused, has fired by the sentinel.
        await world.evaluate_in_new_world("setTimeout(() => { document.body.dataset.control = 'fired'; }, 0); true")
        assert await world.evaluate(SENTINEL) == {"intact": True, "control": "fired"}


async def test_runaway_async_loop_is_cut_off_and_the_page_keeps_working():
    # An async function's `await` cannot be refused; its endless loop runs after the checker
    # returned, until V8 terminates the evaluation at the time limit.
    async with open_app(APP) as app:
        outcome = await asyncio.wait_for(run_checker(app.page, "(async () => { for (;;) await null; })(); return false;"), 60)
        assert not outcome.passed
        await assert_page_still_usable(app)
