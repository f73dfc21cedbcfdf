"""The LLM verifier's answer checks, through the real `openai` client against a scripted OpenAI-protocol server."""

from __future__ import annotations

import json

import pytest

from apps_prompts import AnswerCheck, Task
from llm import CallCache, ModelClient
from llm.testing import ScriptedOpenAIServer, reply_text, scripted_registry
from verifier import PROMPT_VERSION, SYSTEM_PROMPT, verify_app

from .conftest import is_repair, request_text

INC = {"action": "click", "selector": "#inc"}


def answer(*entries: dict) -> object:
    return reply_text(json.dumps({"verdicts": list(entries)}))


def client_for(server: ScriptedOpenAIServer, tmp_path) -> ModelClient:
    return ModelClient(scripted_registry(server), cache=CallCache(tmp_path / "cache", enabled=False))


@pytest.fixture
def question_spec(counter_spec):
    """Three questions about the counter (the spec's expected answers in the first two) and one plain task."""
    return counter_spec.model_copy(update={"tasks": [
        Task(id="count-after-two", description="Add one twice. What does the counter read?", expected_outcome="It reads 2.",
             checks=[AnswerCheck(expected="2", match="number")]),
        Task(id="heading", description="What is the page's heading?", expected_outcome="Counter.",
             checks=[AnswerCheck(expected="Counter", match="exact")]),
        Task(id="greeting-name", description="Save the name Ada. Whom does the page greet?", expected_outcome="Ada.",
             checker="#greeting text contains 'Ada'", checks=[AnswerCheck(expected="ada", match="normalized")]),
        counter_spec.task("add-three"),
    ]})


async def test_the_model_may_give_answer_checks_which_are_proven_on_the_page(question_spec, counter_html, tmp_path):
    reply = answer(
        # answer only, with the number written as the page shows it: read as 2
        {"task_id": "count-after-two", "solvable": True, "reason": "The Add one button counts.",
         "answer": {"expected": "#2", "match": "number"}, "solution": [INC, INC]},
        # answer only, shown at load: no steps
        {"task_id": "heading", "solvable": True, "reason": "The h1.", "answer": {"expected": "Counter", "match": "exact"}},
        # a checker and an answer
        {"task_id": "greeting-name", "solvable": True, "reason": "Name and Save.", "rule": "#greeting text contains 'Ada'",
         "answer": {"expected": "hello,\\s+ada", "match": "regex"},
         "solution": [{"action": "fill", "selector": "#name", "value": "Ada"}, {"action": "click", "selector": "#save"}]},
        {"task_id": "add-three", "solvable": True, "reason": "Counts.", "rule": "#count == 3", "solution": [INC] * 3},
    )
    with ScriptedOpenAIServer([reply]) as server:
        verdicts = await verify_app(question_spec, counter_html, verifier="scripted", client=client_for(server, tmp_path))
    assert len(server.requests) == 1  # everything proven: no repair
    assert PROMPT_VERSION == "verifier-4" and verdicts.prompt_version == "verifier-4"
    sent = request_text(server.requests[0], 1)
    tasks = json.loads(sent[sent.index("["):sent.rindex("]") + 1])
    assert [t.get("asks_for_answer", False) for t in tasks] == [True, True, True, False]
    assert '"2"' not in sent.split("Tasks (")[1]  # the spec's expected answers are not given away
    assert '"answer": {"expected"' in SYSTEM_PROMPT and '"number"' in SYSTEM_PROMPT

    count, heading, greeting, add = verdicts.verdicts
    assert count.proven and count.checker is None and count.answer_check == AnswerCheck(expected="2", match="number")
    assert count.checks[0].source == "verifier" and count.checks[0].proven
    assert "the verifier's answer check was repaired: expected '#2' was read as the number 2" in count.warnings
    assert heading.proven and "at load (no solution steps)" in heading.proof_reason
    assert greeting.proven and greeting.checker_valid and greeting.answer_check.match == "regex"
    assert add.proven and add.checks == []
    assert verdicts.function_completeness == verdicts.function_completeness_proven == 1.0


async def test_a_bad_answer_check_is_dropped_with_its_reason_and_repaired_in_the_one_round_trip(question_spec, counter_html, tmp_path):
    bad = {"task_id": "greeting-name", "solvable": True, "reason": "Name and Save.", "rule": "#greeting text contains 'Ada'",
           "answer": {"expected": "hello, (ada", "match": "regex"},
           "solution": [{"action": "fill", "selector": "#name", "value": "Ada"}, {"action": "click", "selector": "#save"}]}
    not_a_number = {"task_id": "count-after-two", "solvable": True, "reason": "Counts.",
                    "answer": {"expected": "two", "match": "number"}, "solution": [INC, INC]}
    fixed = [{**bad, "answer": {"expected": "Ada", "match": "normalized"}},
             {**not_a_number, "answer": {"expected": 2, "match": "number"}}]

    def script(request):
        if is_repair(request):
            return answer(*fixed)
        return answer(bad, not_a_number, {"task_id": "heading", "solvable": False, "reason": "no"},
                      {"task_id": "add-three", "solvable": False, "reason": "no"})

    with ScriptedOpenAIServer(script) as server:
        verdicts = await verify_app(question_spec, counter_html, verifier="scripted", client=client_for(server, tmp_path))
    assert len(server.requests) == 2
    repair = request_text(server.requests[1])
    assert ("task greeting-name: everything else passed, but the answer check you sent could not be used: "
            "expected 'hello, (ada' is not a valid regex") in repair
    assert 'answer was: {"expected": "hello, (ada", "match": "regex"}' in repair
    # without a usable answer from the model the task's own was proven, yet the bad one is still sent back
    assert ("task count-after-two: everything else passed, but the answer check you sent could not be used: "
            "expected 'two' is not a number (no number in it), but match is 'number'") in repair
    assert "no checker was given" in repair and "heading" not in repair

    count, heading, greeting, _ = verdicts.verdicts
    assert greeting.proven and greeting.repairs == 1 and greeting.answer_check == AnswerCheck(expected="Ada", match="normalized")
    assert count.proven and count.repairs == 1 and count.answer_check == AnswerCheck(expected="2", match="number")
    assert not heading.valid


async def test_an_answer_not_on_the_page_is_repaired_and_stays_claimed_with_the_reason_when_still_wrong(
    question_spec, counter_html, tmp_path
):
    wrong = {"task_id": "count-after-two", "solvable": True, "reason": "Counts.",
             "answer": {"expected": "3", "match": "number"}, "solution": [INC, INC]}

    def script(request):
        if is_repair(request):
            return answer(wrong)
        return answer(wrong, *({"task_id": t, "solvable": False, "reason": "no"} for t in ("heading", "greeting-name", "add-three")))

    with ScriptedOpenAIServer(script) as server:
        verdicts = await verify_app(question_spec, counter_html, verifier="scripted", client=client_for(server, tmp_path))
    repair = request_text(server.requests[1])
    assert "task count-after-two: was not proven: answer check: no number within 0 of 3 is on the page (numbers shown: 2)" in repair
    count = verdicts.verdict("count-after-two")
    assert count.valid and count.proof == "claimed" and count.repairs == 1 and not count.checks[0].proven
    assert "no number within 0 of 3" in count.proof_reason
    assert verdicts.function_completeness == 0.25 and verdicts.function_completeness_proven == 0.0


async def test_without_an_answer_from_the_model_the_specs_is_proven_against_the_models_solution(
    question_spec, counter_html, tmp_path
):
    reply = answer(
        {"task_id": "greeting-name", "solvable": True, "reason": "Name and Save.", "rule": "#greeting text contains 'Ada'",
         "solution": [{"action": "fill", "selector": "#name", "value": "Ada"}, {"action": "click", "selector": "#save"}]},
        *({"task_id": t, "solvable": False, "reason": "no"} for t in ("count-after-two", "heading", "add-three")),
    )
    with ScriptedOpenAIServer([reply]) as server:
        verdicts = await verify_app(question_spec, counter_html, verifier="scripted", client=client_for(server, tmp_path))
    assert len(server.requests) == 1
    greeting = verdicts.verdict("greeting-name")
    assert greeting.proven and greeting.checks[0].source == "spec" and greeting.answer_check.expected == "ada"
    assert not verdicts.verdict("count-after-two").valid  # judged unsolvable: the spec's answer check is not used


async def test_an_answer_only_entry_whose_answer_is_dropped_is_unsupported_until_its_repair(counter_spec, counter_html, tmp_path):
    any_text = {"task_id": "reset", "solvable": True, "reason": "The count shows.", "answer": {"expected": "x*", "match": "regex"}}
    script = [answer(any_text, {"task_id": "add-three", "solvable": False, "reason": "no"},
                     {"task_id": "greet-ada", "solvable": False, "reason": "no"}),
              answer({**any_text, "answer": {"expected": "0", "match": "number"}})]
    with ScriptedOpenAIServer(script) as server:
        verdicts = await verify_app(counter_spec, counter_html, verifier="scripted", client=client_for(server, tmp_path))
    repair = request_text(server.requests[1])
    assert ("task reset: gave no checker and no usable answer check: the answer check you sent could not be used: "
            "the regex 'x*' matches an empty answer, so it would accept any answer") in repair
    reset = verdicts.verdict("reset")
    assert reset.proven and reset.repairs == 1 and reset.answer_check == AnswerCheck(expected="0", match="number")
    assert "first attempt: gave no checker and no usable answer check" in reset.warnings[0]
