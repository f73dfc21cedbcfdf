"""The one seam every model role asks through: `RoleClient`, `ask_json` / `ask`, `Repair`, `Answer` — on the scripted server."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from llm import (
    CALL_FAILURES,
    REPAIR_PROMPT,
    ModelCallError,
    Repair,
    RoleClient,
    UnknownModelError,
    ask,
    ask_json,
    system_message,
    user_message,
)
from llm.testing import ScriptedOpenAIServer, reply_status, reply_text, scripted_model

SCHEMA = {"type": "object", "required": ["ok"], "properties": {"ok": {"type": "boolean"}},
          "additionalProperties": False}
ASKED = [system_message("You answer with JSON."), user_message("Is it done?", images=[])]


def _messages(server: ScriptedOpenAIServer, index: int) -> list[dict]:
    return server.requests[index].json["messages"]


async def test_a_reply_that_breaks_the_schema_is_repaired_with_the_error_text(make_client):
    with ScriptedOpenAIServer([reply_text('{"ok": "yes"}'), reply_text('Sure: {"ok": true}')]) as server:
        answer = await ask_json(RoleClient(make_client(server, cache=False), "judge"), ASKED, SCHEMA)
    assert answer.ok and answer.value == {"ok": True} and answer.error is None
    problem = "the JSON breaks the schema: ok: 'yes' is not of type 'boolean'"
    assert _messages(server, 0) == ASKED
    assert _messages(server, 1) == [*ASKED, {"role": "assistant", "content": '{"ok": "yes"}'},
                                    {"role": "user", "content": REPAIR_PROMPT.format(problem=problem)}]
    assert answer.messages == [*_messages(server, 1), {"role": "assistant", "content": 'Sure: {"ok": true}'}]


async def test_attempts_are_bounded_and_every_attempt_is_recorded_with_its_error(make_client):
    replies = ["not JSON at all", '{"ok": 1}', '{"ok": null}', '{"ok": true}']
    with ScriptedOpenAIServer([reply_text(text) for text in replies]) as server:
        answer = await ask_json(RoleClient(make_client(server, cache=False), "judge"), ASKED, SCHEMA, attempts=3)
    assert len(server.requests) == 3  # the fourth, valid reply is never asked for
    assert not answer.ok and answer.value is None
    assert [attempt.number for attempt in answer.attempts] == [1, 2, 3]
    assert [attempt.reply for attempt in answer.attempts] == replies[:3]
    assert [str(attempt.error) for attempt in answer.attempts] == [
        "the reply contains no JSON object",
        "the JSON breaks the schema: ok: 1 is not of type 'boolean'",
        "the JSON breaks the schema: ok: None is not of type 'boolean'",
    ]
    assert answer.tokens == 3 * (11 + 7)
    totals, tokens = SimpleNamespace(calls=1, cached_calls=0, prompt_tokens=0, completion_tokens=0, latency_s=0.0), \
        SimpleNamespace(calls=0, cached_calls=0, prompt_tokens=0, completion_tokens=0)
    answer.count_into(totals)
    answer.count_into(tokens)  # a record without latency_s gets the rest
    assert (totals.calls, totals.cached_calls, totals.prompt_tokens, totals.completion_tokens) == (4, 0, 33, 21)
    latency = 0.0
    for attempt in answer.attempts:  # summed to the millisecond call by call, as the coder's usage always was
        latency = round(latency + attempt.result.latency_s, 3)
    assert totals.latency_s == latency
    assert vars(tokens) == {"calls": 3, "cached_calls": 0, "prompt_tokens": 33, "completion_tokens": 21}
    assert answer.error == ("invalid reply after 3 attempt(s): the JSON breaks the schema: ok: None is not of type "
                            "'boolean'; last reply: '{\"ok\": null}'")


@pytest.mark.parametrize("resend, kept", [("conversation", 4), ("question", 2), ("system", 1)])
async def test_a_repair_resends_the_conversation_the_question_or_the_system_prompt(make_client, resend, kept):
    with ScriptedOpenAIServer([reply_text("one"), reply_text("two"), reply_text('{"ok": false}')]) as server:
        repair = Repair("Wrong: {problem}", resend=resend, reply_chars=2)
        answer = await ask_json(RoleClient(make_client(server, cache=False), "judge"), ASKED, SCHEMA, repair=repair,
                                attempts=3)
    assert answer.value == {"ok": False}
    third = _messages(server, 2)
    assert third[:kept] == [*ASKED, {"role": "assistant", "content": "on"},
                            {"role": "user", "content": "Wrong: the reply contains no JSON object"}][:kept]
    assert third[kept:] == [{"role": "assistant", "content": "tw"},  # cut at reply_chars
                            {"role": "user", "content": "Wrong: the reply contains no JSON object"}]


async def test_a_repair_prompt_may_be_a_function_of_the_readers_error_and_a_reader_its_own(make_client):
    class Unusable(ValueError):
        def __init__(self, problems: list[str]) -> None:
            super().__init__("; ".join(problems))
            self.problems = problems

    def parse(text: str) -> int:
        if not text.isdigit():
            raise Unusable(["not a number", f"got {len(text)} characters"])
        return int(text)

    repair = Repair(lambda error: "\n".join(f"- {p}" for p in error.problems))
    with ScriptedOpenAIServer([reply_text("seven"), reply_text("7")]) as server:
        answer = await ask_json(RoleClient(make_client(server, cache=False), "judge"), ASKED, parse=parse,
                                repair=repair, invalid=Unusable)
    assert answer.value == 7
    assert _messages(server, 1)[-1] == {"role": "user", "content": "- not a number\n- got 5 characters"}


async def test_ask_reads_the_whole_result_and_a_request_of_its_own_follows_a_refused_reply(make_client):
    def read(result):
        if result.finish_reason != "stop":
            raise ValueError(f"cut off ({result.finish_reason})")
        return result.text

    def again(asked, sent, attempt):
        return [*asked, user_message(f"(Attempt {attempt.number + 1}.) {attempt.error}")]

    with ScriptedOpenAIServer([reply_text("<html", finish_reason="length"), reply_text("<html></html>")]) as server:
        answer = await ask(RoleClient(make_client(server, cache=False), "coder"), ASKED, read, repair=again)
    assert answer.value == "<html></html>"
    assert _messages(server, 1) == [*ASKED, {"role": "user", "content": "(Attempt 2.) cut off (length)"}]


async def test_a_failed_call_is_raised_or_recorded_as_the_role_chooses(make_client):
    with ScriptedOpenAIServer([reply_text("nope"), reply_status(400)]) as server:
        client = RoleClient(make_client(server, cache=False), "judge")
        answer = await ask_json(client, ASKED, SCHEMA, call_errors=CALL_FAILURES)
        assert not answer.ok and isinstance(answer.call_error, ModelCallError)
        assert [attempt.reply for attempt in answer.attempts] == ["nope"]  # the failed call is no attempt
        assert answer.error.startswith("model call failed: ") and "400" in answer.error
    with ScriptedOpenAIServer([reply_status(400)]) as server:
        with pytest.raises(ModelCallError):
            await ask_json(RoleClient(make_client(server, cache=False), "judge"), ASKED, SCHEMA)


async def test_params_go_to_every_call_and_at_least_one_attempt_is_asked(make_client):
    with ScriptedOpenAIServer([reply_text("x"), reply_text('{"ok": true}')]) as server:
        client = RoleClient(make_client(server, cache=False), "judge")
        await ask_json(client, ASKED, SCHEMA, params={"temperature": 0.25})
        with pytest.raises(ValueError, match="attempts must be at least 1"):
            await ask_json(client, ASKED, SCHEMA, attempts=0)
    assert [request.json["temperature"] for request in server.requests] == [0.25, 0.25]


async def test_a_role_client_calls_for_its_role_or_for_the_name_it_was_given(make_client):
    with ScriptedOpenAIServer(default=reply_text("{}")) as server:
        base = make_client(server, cache=False)
        base.registry = base.registry.with_models(scripted_model(server, "other", model="other-model"))
        coder = RoleClient(base, "other", role="coder")
        by_name = RoleClient(base, "other")
        as_role = RoleClient(base, "judge", role="judge")
        assert (coder.model, coder.label, coder.client.registry.roles["coder"]) == ("other", "coder", "other")
        assert base.registry.roles["coder"] == "scripted"  # the client it was given is not re-bound
        assert (by_name.label, by_name.client, as_role.client) == ("other", base, base)  # nothing to re-bind
        for client in (coder, by_name, as_role):
            await client.chat(ASKED)
        with pytest.raises(UnknownModelError):
            RoleClient(base, "no-such-model")
    assert [request.json["model"] for request in server.requests] == ["other-model", "other-model", "scripted-model"]
    assert {role: usage.calls for role, usage in base.ledger.by_role().items()} == {"coder": 1, "other": 1, "judge": 1}
    assert json.dumps(server.requests[0].json["messages"]) == json.dumps(ASKED)
