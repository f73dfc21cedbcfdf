"""verdicts.json: the proof fields are written, and files written before proofs existed still load."""

from __future__ import annotations

import json

import pytest

from apps_prompts import AnswerCheck
from verifier import GateResult, Verdict, function_completeness_proven, read_verdicts, write_verdicts

OLD_FILE = {  # verdicts.json as the verifier wrote it before proofs (prompt verifier-2)
    "app_id": "counter", "domain": "utility", "html_sha256": "0" * 64, "verifier": "gpt-5", "offline": False,
    "prompt_version": "verifier-2", "tokens": {"prompt_tokens": 10, "completion_tokens": 5, "calls": 1, "cached_calls": 0},
    "elapsed_s": 1.5, "function_completeness": 0.5,
    "verdicts": [
        {"task_id": "add-three", "solvable": True, "checker": "return false;", "checker_source": "#count == 3",
         "checker_kind": "rule", "gate": {"accepted": True, "kind": "rule", "javascript": "return false;", "reasons": [],
                                          "warnings": [], "missing_selectors": [], "initial": None},
         "reasons": ["ok"], "warnings": [], "model": "gpt-5", "offline": False, "tokens": 7, "repairs": 0},
        {"task_id": "reset", "solvable": False, "checker": None, "checker_source": None, "checker_kind": None, "gate": None,
         "reasons": ["no reset control"], "warnings": [], "model": "gpt-5", "offline": False, "tokens": 7, "repairs": 0},
    ],
}


def test_an_old_verdicts_file_loads_with_claimed_and_unsupported_proofs(tmp_path):
    (tmp_path / "verdicts.json").write_text(json.dumps(OLD_FILE))
    verdicts = read_verdicts(tmp_path)
    add, reset = verdicts.verdicts
    assert add.valid and add.proof == "claimed" and not add.proven and add.solution == [] and add.static_warnings == []
    assert add.proof_reason == "no solution was replayed"
    assert not reset.valid and reset.proof == "unsupported" and reset.proof_reason == "no checker passed the gate"
    assert verdicts.function_completeness == 0.5 and verdicts.function_completeness_proven == 0.0
    assert function_completeness_proven(verdicts).denominator == 2


def test_proof_fields_are_written_and_read_back(tmp_path):
    (tmp_path / "verdicts.json").write_text(json.dumps(OLD_FILE))
    verdicts = read_verdicts(tmp_path)
    verdicts.verdicts[0] = Verdict.model_validate({
        **verdicts.verdicts[0].model_dump(), "proof": "proven", "proof_reason": "true after 3 steps",
        "solution": [{"action": "click", "selector": "#inc"}], "static_warnings": ["a warning"],
    })
    write_verdicts(verdicts, tmp_path / "out")
    written = json.loads((tmp_path / "out" / "verdicts.json").read_text())
    assert written["function_completeness_proven"] == 0.5
    assert written["verdicts"][0]["proof"] == "proven" and written["verdicts"][1]["proof"] == "unsupported"
    again = read_verdicts(tmp_path / "out")
    assert again == verdicts and again.verdicts[0].proven and again.verdicts[0].solution[0].selector == "#inc"


@pytest.mark.parametrize("proof", ["proven", "claimed"])
def test_a_proof_without_a_valid_checker_is_refused_naming_the_task(proof):
    with pytest.raises(ValueError, match=f"task 'reset': proof '{proof}' contradicts a checker that did not pass"):
        Verdict(task_id="reset", solvable=False, model="m", proof=proof)


def test_unsupported_with_a_valid_checker_is_refused():
    gate = GateResult(accepted=True, kind="js", javascript="return false;")
    with pytest.raises(ValueError, match="proof 'unsupported' contradicts a checker that passed"):
        Verdict(task_id="t", solvable=True, checker="return false;", gate=gate, model="m", proof="unsupported")


def test_an_old_verdicts_file_without_further_checks_loads_with_none(tmp_path):
    (tmp_path / "verdicts.json").write_text(json.dumps(OLD_FILE))
    verdicts = read_verdicts(tmp_path)
    assert all(v.checks == [] and v.answer_check is None for v in verdicts.verdicts)
    assert verdicts.answer_checks() == {} and [v.valid for v in verdicts.verdicts] == [True, False]


def test_further_checks_are_written_with_their_proofs_and_read_back(tmp_path):
    answer = {"check": {"kind": "answer", "expected": "3", "match": "number", "tolerance": 0.5}, "proof": "proven",
              "proof_reason": "answer check: the page shows the number 3", "source": "verifier"}
    judge = {"check": {"kind": "flow"}, "proof": "claimed", "proof_reason": "a model judge decides after the rollout"}
    (tmp_path / "verdicts.json").write_text(json.dumps(OLD_FILE))
    verdicts = read_verdicts(tmp_path)
    verdicts.verdicts[0] = Verdict.model_validate({**verdicts.verdicts[0].model_dump(), "checks": [answer, judge]})
    write_verdicts(verdicts, tmp_path / "out")
    written = json.loads((tmp_path / "out" / "verdicts.json").read_text())["verdicts"][0]["checks"]
    assert [c["check"]["kind"] for c in written] == ["answer", "flow"] and written[0]["check"]["tolerance"] == 0.5
    again = read_verdicts(tmp_path / "out").verdicts[0]
    assert again.answer_check == AnswerCheck(expected="3", match="number", tolerance=0.5)
    assert [(c.kind, c.proven, c.source) for c in again.checks] == [("answer", True, "verifier"), ("flow", False, "spec")]


def test_an_answer_only_verdict_is_valid_and_one_without_any_check_is_not():
    answer = {"check": {"kind": "answer", "expected": "even", "match": "regex"}, "proof": "proven"}
    verdict = Verdict(task_id="q", solvable=True, model="m", checks=[answer], proof="proven")
    assert verdict.valid and verdict.proven and not verdict.checker_valid
    assert Verdict(task_id="q", solvable=True, model="m", checks=[answer]).proof == "claimed"  # an older writer: no proof
    with pytest.raises(ValueError, match="proof 'proven' contradicts a checker that did not pass"):
        Verdict(task_id="q", solvable=True, model="m", proof="proven")


def test_a_proven_task_with_an_unproven_answer_check_or_two_answer_checks_is_refused():
    gate = GateResult(accepted=True, kind="js", javascript="return false;")
    claimed = {"check": {"kind": "answer", "expected": "4"}, "proof": "claimed"}
    with pytest.raises(ValueError, match="contradicts an answer check that was not proven"):
        Verdict(task_id="t", solvable=True, checker="return false;", gate=gate, model="m", proof="proven", checks=[claimed])
    with pytest.raises(ValueError, match="at most one of each kind"):
        Verdict(task_id="t", solvable=True, checker="return false;", gate=gate, model="m", checks=[claimed, claimed])
