"""The report's one-line account of a revision's non-regression contract."""

from flows._report import _contract_note


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
