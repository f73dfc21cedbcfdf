"""Reading a verifier reply: the schema every entry must meet, and each solution checked on its own."""

from __future__ import annotations

import json

import jsonschema
import pytest

from verifier import VerifierReplyError, parse_reply, parse_solution, solution_schema, verdict_reply_schema

CHECKER = "return document.querySelector('#count')?.textContent === '3';"


def reply(**entry) -> str:
    return json.dumps({"verdicts": [{"task_id": "t", "solvable": True, "reason": "r", "checker": CHECKER, **entry}]})


def test_a_solution_is_read_into_steps_with_numbers_as_text():
    entry = parse_reply(reply(solution=[{"action": "fill", "selector": "#n", "value": 5},
                                        {"action": "wait", "selector": "#done", "value": 2.5},
                                        {"action": "click", "selector": "#go"}]))["t"]
    assert [(s.action, s.selector, s.value) for s in entry.solution] == [("fill", "#n", "5"), ("wait", "#done", "2.5"), ("click", "#go", None)]
    assert entry.solution_error is None and json.loads(entry.solution_text)[0]["value"] == 5


@pytest.mark.parametrize(
    ("solution", "says"),
    [
        (None, "no solution was given"),
        ([], "no solution was given"),
        ([{"action": "fill", "selector": "#n"}], "fill, press and select steps need a 'value'"),
        ([{"action": "drag", "selector": "#n"}], "solution/0/action"),
        ([{"action": "click", "selector": ""}], "solution/0/selector"),
        ([{"action": "click", "selector": "#a", "x": 1}], "solution/0"),
        ([{"action": "click", "selector": "#a"}] * 61, "1 to 60 steps"),
        ([{"action": "click", "selector": "#a"}, {"action": "wait", "selector": "#b", "value": "61"}], "solution step 2 is invalid"),
        ("click #a", "a solvable task needs a 'solution'"),
    ],
    ids=["missing", "empty", "no-value", "unknown-action", "empty-selector", "extra-key", "too-long", "wait-too-long", "not-a-list"],
)
def test_a_bad_solution_costs_its_entry_a_proof_not_the_reply(solution, says):
    entry = parse_reply(reply() if solution is None else reply(solution=solution))["t"]
    assert entry.checker == CHECKER and entry.solution == []
    assert says in entry.solution_error


def test_a_solution_of_an_unsolvable_entry_is_ignored():
    text = json.dumps({"verdicts": [{"task_id": "t", "solvable": False, "reason": "no button", "solution": "nonsense"}]})
    entry = parse_reply(text)["t"]
    assert not entry.solvable and entry.solution == [] and entry.solution_error is None


def test_a_checker_is_still_required_of_the_whole_reply():
    with pytest.raises(VerifierReplyError, match="verdicts/0: a solvable task needs a non-empty 'checker'"):
        parse_reply(json.dumps({"verdicts": [{"task_id": "t", "solvable": True, "reason": "r", "solution": []}]}))


def test_the_published_schema_asks_a_solvable_entry_for_a_checker_and_a_solution():
    validator = jsonschema.Draft202012Validator(verdict_reply_schema())
    good = json.loads(reply(solution=[{"action": "click", "selector": "#inc"}]))
    assert validator.is_valid(good)
    assert not validator.is_valid(json.loads(reply()))
    assert not validator.is_valid(json.loads(reply(solution=[{"action": "press", "selector": "#n"}])))
    lenient = jsonschema.Draft202012Validator(verdict_reply_schema(solutions=False))
    assert lenient.is_valid(json.loads(reply()))


def test_the_solution_schema_names_exactly_the_actions_of_a_solution_step():
    from apps_prompts import SolutionStep
    from typing import get_args

    assert solution_schema()["items"]["properties"]["action"]["enum"] == list(get_args(SolutionStep.model_fields["action"].annotation))
    steps, error = parse_solution([{"action": action, "selector": "#a", "value": "1"} for action in ("click", "press", "select")])
    assert error is None and len(steps) == 3


def test_an_answer_is_read_beside_the_checker_and_a_bad_one_is_dropped_with_its_reason():
    entries = parse_reply(json.dumps({"verdicts": [
        {"task_id": "a", "solvable": True, "reason": "r", "checker": CHECKER, "solution": [{"action": "click", "selector": "#inc"}],
         "answer": {"expected": "$3.00", "match": "number", "tolerance": 0.01}},
        {"task_id": "b", "solvable": True, "reason": "r", "checker": CHECKER, "solution": [{"action": "click", "selector": "#inc"}],
         "answer": {"expected": "[", "match": "regex"}},
        {"task_id": "c", "solvable": True, "reason": "r", "answer": "Counter"},  # an answer alone, no steps: shown at load
    ]}))
    a, b, c = entries["a"], entries["b"], entries["c"]
    assert (a.answer.expected, a.answer.tolerance, a.answer_note) == ("3", 0.01, "expected '$3.00' was read as the number 3")
    assert b.answer is None and "is not a valid regex" in b.answer_error and json.loads(b.answer_text)["expected"] == "["
    assert c.source == "" and c.answer.match == "normalized" and c.solution_error == "no solution was given"


def test_the_published_schema_takes_an_answer_alone_or_beside_a_checker_with_its_solution():
    validator = jsonschema.Draft202012Validator(verdict_reply_schema())
    answer_only = {"verdicts": [{"task_id": "t", "solvable": True, "reason": "r", "answer": {"expected": "3", "match": "number"}}]}
    assert validator.is_valid(answer_only)
    with_checker = json.loads(reply(answer={"expected": "3", "match": "number"}))
    assert not validator.is_valid(with_checker)  # a checker still needs its solution
    assert validator.is_valid(json.loads(reply(answer={"expected": "3"}, solution=[{"action": "click", "selector": "#inc"}])))
    assert not validator.is_valid(json.loads(reply(answer={"expected": "3", "match": "fuzzy"},
                                                   solution=[{"action": "click", "selector": "#inc"}])))
    nothing = {"verdicts": [{"task_id": "t", "solvable": True, "reason": "r", "solution": []}]}
    with pytest.raises(VerifierReplyError, match="'checker'.*or an 'answer' for a task that asks a question"):
        parse_reply(json.dumps(nothing))
