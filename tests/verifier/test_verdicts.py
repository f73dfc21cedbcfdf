"""verdicts.json: the proof fields are written, and files written before proofs existed still load."""

from __future__ import annotations

import json

import pytest

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
