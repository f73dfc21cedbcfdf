"""The report's one-line account of a revision's non-regression contract."""

from flows._report import _contract_note, _stage_errors
from flows._results import AppRoundResult


def test_a_violated_contract_says_what_was_retried_and_what_is_still_missing():
    note = _contract_note({"status": "violated", "protected_ids": ["a", "b", "c"], "protected_functions": ["add"],
                           "retried": True, "first_missing_ids": ["b", "c"], "first_missing_functions": [],
                           "missing_ids": ["c"], "missing_functions": ["add"], "unchecked_ids": []})
    assert "<b>violated</b>" in note and "3 checker id(s) and 1 function(s)" in note
    assert "retried once after the first reply dropped b, c" in note
    assert "still missing: c, add()" in note


def test_a_kept_contract_is_short_and_no_contract_is_nothing():
    note = _contract_note({"status": "kept", "protected_ids": ["a"], "protected_functions": []})
    assert "<b>kept</b>" in note and "missing" not in note and "retried" not in note
    assert _contract_note(None) == ""


def test_failed_stages_are_listed_per_round_and_absent_when_none_failed():
    ok = AppRoundResult(app_id="a", domain="app", coder="c", cua="h", mode="integrated", round=0, html="", html_sha="")
    bad = ok.model_copy(update={"round": 1, "errors": ["verifying round 1 failed: ModelCallError: 503 <retries out>"]})
    listed = _stage_errors([ok, bad])
    assert "round 1: verifying round 1 failed" in listed and "&lt;retries out&gt;" in listed
    assert _stage_errors([ok]) == ""
