"""The one replay: a solution on a fresh page, and what a failed proof says about itself."""

from __future__ import annotations

from apps_prompts import SolutionStep
from verifier import gate_and_prove, gate_and_prove_all
from verifier._proof import STEP_TIMEOUT_MS

from .conftest import COUNTER_HTML

CLICK_INC = SolutionStep(action="click", selector="#inc")
COUNT_IS_3 = "return document.querySelector('#count')?.textContent === '3';"


async def test_a_checker_true_after_its_solution_is_proven():
    gate, proof = await gate_and_prove(COUNTER_HTML, COUNT_IS_3, [CLICK_INC] * 3)
    assert gate.accepted and proof is not None and proof.proven
    assert proof.reason == "the checker was false at load and true after replaying the 3-step solution"


async def test_a_step_on_a_missing_element_names_the_step_and_says_nothing_matches():
    steps = [CLICK_INC, SolutionStep(action="click", selector="#add-two")]
    gate, proof = await gate_and_prove(COUNTER_HTML, COUNT_IS_3, steps, step_timeout_ms=1_000)
    assert gate.accepted and not proof.proven and proof.final is None
    assert proof.failed_step.number == 2
    assert proof.reason.startswith("solution step 2 (click #add-two) failed: ")
    assert "no element matches '#add-two'" in proof.reason


async def test_a_step_on_a_hidden_element_says_what_playwright_waited_for():
    html = COUNTER_HTML.replace('<button id="save">', '<button id="save" hidden>')
    steps = [SolutionStep(action="fill", selector="#name", value="Ada"), SolutionStep(action="click", selector="#save")]
    _, proof = await gate_and_prove(html, "#greeting == 'Hello, Ada!'", steps, step_timeout_ms=1_000)
    assert "solution step 2 (click #save) failed" in proof.reason and "element is not visible" in proof.reason


async def test_a_checker_still_false_after_the_replay_says_its_value_and_what_it_read():
    _, proof = await gate_and_prove(COUNTER_HTML, COUNT_IS_3, [CLICK_INC] * 2)
    assert not proof.proven and proof.final is not None and proof.final.ok
    assert proof.reason == ("the checker returned false after the replay of the 2-step solution; "
                            "after the replay '#count' shows text '2'")
    _, proof = await gate_and_prove(COUNTER_HTML, "#name == 'Ada' AND #banner exists", [CLICK_INC])
    assert "'#name' shows value ''" in proof.reason and "'#banner' matches nothing" in proof.reason


async def test_a_checker_that_throws_after_the_replay_says_so():
    checker = "const c = document.querySelector('#count'); if (c.textContent === '1') { return document.querySelector('#x').y; } return false;"
    _, proof = await gate_and_prove(COUNTER_HTML, checker, [CLICK_INC])
    assert not proof.proven and proof.final.error is not None
    assert "after the replay of the 1-step solution the checker throws: TypeError" in proof.reason


async def test_a_replay_is_cut_off_at_its_time_limit():
    steps = [SolutionStep(action="wait", selector="#never", value="30")]
    _, proof = await gate_and_prove(COUNTER_HTML, COUNT_IS_3, steps, proof_timeout_s=0.5)
    assert proof.timed_out and not proof.proven
    # By the proof's own clock, ended before the step's limit (10 s) or the wait's 30 s could end it: the 0.5 s
    # limit cut it, whatever the machine's load.
    assert proof.elapsed_ms < STEP_TIMEOUT_MS
    assert "did not finish within its time limit" in proof.reason


STORED_COUNTER = """<button id="inc">+1</button><p id="count"></p><script>
  const show = () => document.getElementById('count').textContent = localStorage.getItem('n') || '0';
  document.getElementById('inc').onclick = () => { localStorage.setItem('n', String(Number(localStorage.getItem('n') || 0) + 1)); show(); };
  show();
</script>"""


async def test_every_proof_starts_from_a_fresh_page_with_fresh_storage():
    checkers = {f"run-{i}": ("#count == 1", [CLICK_INC]) for i in range(5)}
    results = await gate_and_prove_all(STORED_COUNTER, checkers)
    assert list(results) == list(checkers)
    assert all(gate.accepted and proof.proven for gate, proof in results.values()), {k: p and p.reason for k, (_, p) in results.items()}


async def test_checkers_without_a_solution_are_gated_but_not_replayed():
    results = await gate_and_prove_all(
        COUNTER_HTML, {"unsolved": (COUNT_IS_3, []), "broken": ("#count >", [CLICK_INC]), "solved": (COUNT_IS_3, [CLICK_INC] * 3)}
    )
    assert list(results) == ["unsolved", "broken", "solved"]
    assert results["unsolved"][0].accepted and results["unsolved"][1] is None
    assert not results["broken"][0].accepted and results["broken"][1] is None and "does not parse" in results["broken"][0].reason
    assert results["solved"][1].proven
