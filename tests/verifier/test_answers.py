"""Answer checks without a browser: an agent's final answer (`match_answer`), a page's text (`answer_on_page`),
and the answer check a verifier model sends (`parse_answer`)."""

from __future__ import annotations

import pytest

from apps_prompts import AnswerCheck
from verifier import answer_on_page, match_answer, parse_answer


def check(expected: str, match: str = "normalized", tolerance: float = 0.0) -> AnswerCheck:
    return AnswerCheck(expected=expected, match=match, tolerance=tolerance)


@pytest.mark.parametrize(("answer", "expected", "match", "tolerance", "passed"), [
    ("15:00", "15:00", "exact", 0, True),
    ("  15:00\n", "15:00", "exact", 0, True),  # white space around is not part of the answer
    ("15:00.", "15:00", "exact", 0, False),
    ("15:00", "15.00", "exact", 0, False),
    ("boat tour", "Boat tour", "exact", 0, False),  # exact means case too
    ("  'BOAT   Tour.' ", "Boat tour", "normalized", 0, True),
    ("Boat tour", "boat  tour", "normalized", 0, True),
    ("The Boat tour", "Boat tour", "normalized", 0, False),
    ("It is EVEN.", r"\beven\b", "regex", 0, True),  # case-insensitive, anywhere in the answer
    ("uneven", r"\beven\b", "regex", 0, False),
    ("odd", r"\beven\b", "regex", 0, False),
    ("The total is $1,343.00", "1343", "number", 0.01, True),  # thousands separators
    ("1.343e3 euros", "1343", "number", 0, True),  # exponents
    ("about 1,342.5", "1343", "number", 0.5, True),
    ("about 1,342.5", "1343", "number", 0.4, False),
    ("3 tickets cost 40 dollars", "40", "number", 0, True),  # the last number is the answer
    ("40 dollars for 3 tickets", "40", "number", 0, False),
    ("-300", "-300", "number", 0, True),
], ids=lambda value: repr(value)[:24])
def test_each_match_kind_passes_and_fails_as_documented(answer, expected, match, tolerance, passed):
    result = match_answer(answer, check(expected, match, tolerance))
    assert result.passed is passed, result.reason


@pytest.mark.parametrize("answer", [None, "", "   \n"])
@pytest.mark.parametrize("match", ["exact", "normalized", "regex", "number"])
def test_an_empty_answer_fails_every_kind_saying_there_was_none(answer, match):
    expected = "1" if match == "number" else "x"
    result = match_answer(answer, check(expected, match))
    assert not result.passed and result.reason == "the agent gave no final answer"


def test_a_number_check_names_what_it_compared():
    assert match_answer("no idea", check("40", "number")).reason == "no number in the answer 'no idea'"
    assert match_answer("41", check("40", "number", 0.5)).reason == "answer's number 41 is not within 0.5 of 40"


PAGE = """Lisbon trip
Total spent
€1,068.00
Biggest expense
Boat   tour
The code is even and at most 50.
Nothing is deleted for 160 days.
Timer 15:00"""


@pytest.mark.parametrize(("expected", "match", "tolerance", "shown"), [
    ("15:00", "exact", 0, True),
    ("Total Spent", "exact", 0, False),  # exact: case counts
    ("total SPENT", "normalized", 0, True),
    ("boat tour", "normalized", 0, True),  # runs of white space on the page are one space
    ("'Boat tour.'", "normalized", 0, True),  # the punctuation around the expected answer is not looked for
    ("Lisbon trips", "normalized", 0, False),
    ("60", "exact", 0, False),  # whole words: not read out of "160"
    (r"\beven\b", "regex", 0, True),
    (r"^the code is even", "regex", 0, True),  # ^ at a line's start, case-insensitive
    (r"\bodd\b", "regex", 0, False),
    ("1068", "number", 0, True),
    ("1067.5", "number", 0.5, True),
    ("1067.5", "number", 0.4, False),
    ("60", "number", 0, False),
], ids=lambda value: repr(value)[:20])
def test_the_expected_answer_is_read_in_a_pages_text_by_its_match_kind(expected, match, tolerance, shown):
    result = answer_on_page(PAGE, check(expected, match, tolerance))
    assert result.passed is shown, result.reason


def test_what_the_page_did_not_show_is_named_with_what_it_shows():
    missing = answer_on_page(PAGE, check("60", "number"))
    assert "no number within 0 of 60 is on the page" in missing.reason and "1068, 50, 160, 15, 0" in missing.reason
    text = answer_on_page("Short page", check("Boat tour"))
    assert text.reason == "the page does not show the text 'boat tour' (case and spacing aside) (it shows: 'Short page')"
    assert answer_on_page(PAGE, check("1068", "number")).reason == "the page shows the number 1068 (within 0 of 1068)"


@pytest.mark.parametrize(("raw", "expected", "match", "tolerance", "note"), [
    ({"expected": "Boat tour", "match": "normalized"}, "Boat tour", "normalized", 0, None),
    ({"expected": 1343, "match": "number", "tolerance": 0.01}, "1343", "number", 0.01, None),
    ({"expected": "$1,717.83", "match": "number"}, "1717.83", "number", 0, "expected '$1,717.83' was read as the number 1717.83"),
    ({"expected": "  15:00 ", "match": "exact"}, "15:00", "exact", 0, None),
    ({"expected": "Paris"}, "Paris", "normalized", 0, None),
    ("Paris", "Paris", "normalized", 0, "a bare answer was read as expected 'Paris' with match 'normalized'"),
    (42, "42", "number", 0, "a bare answer was read as expected 42 with match 'number'"),
], ids=["normalized", "number", "number-with-currency", "exact", "default-match", "bare-text", "bare-number"])
def test_a_usable_answer_from_the_model_is_read_and_repaired_where_it_is_unambiguous(raw, expected, match, tolerance, note):
    answer, error, said = parse_answer(raw)
    assert error is None and answer == check(expected, match, tolerance) and said == note


@pytest.mark.parametrize(("raw", "says"), [
    ({"expected": "about 40 or 50", "match": "number"}, "is not a number (2 numbers in it), but match is 'number'"),
    ({"expected": "forty", "match": "number"}, "is not a number (no number in it)"),
    ({"expected": "(even", "match": "regex"}, "is not a valid regex"),
    ({"expected": "\\d*", "match": "regex"}, "matches an empty answer, so it would accept any answer"),
    ({"expected": "40", "match": "number", "tolerance": -1}, "answer/tolerance"),
    ({"expected": "40", "match": "fuzzy"}, "answer/match"),
    ({"expected": ""}, "answer/expected"),
    ({"match": "number"}, "an 'answer' is {\"expected\""),
    ({"expected": "x", "unit": "kg"}, "an 'answer' is {\"expected\""),
    (True, "an 'answer' is {\"expected\""),
], ids=["two-numbers", "no-number", "bad-regex", "empty-regex", "negative-tolerance", "unknown-match", "empty", "no-expected",
        "extra-key", "boolean"])
def test_an_unusable_answer_from_the_model_is_dropped_with_the_reason(raw, says):
    answer, error, note = parse_answer(raw)
    assert answer is None and note is None and says in error


def test_no_answer_sent_is_neither_an_answer_nor_an_error():
    assert parse_answer(None) == (None, None, None)
