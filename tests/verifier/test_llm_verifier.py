"""The LLM verifier through the real `openai` client against a scripted OpenAI-protocol server."""

from __future__ import annotations

import json

import pytest

from llm import CallCache, ModelCallError, ModelClient, UnknownModelError
from llm.testing import ScriptedOpenAIServer, reply_status, reply_text, scripted_registry
from verifier import LLMVerifierConfig, function_completeness, read_verdicts, verify_app

GOOD = {
    "add-three": {"task_id": "add-three", "solvable": True, "reason": "The Add one button raises #count.",
                  "rule": "#count == 3", "solution": [{"action": "click", "selector": "#inc"}] * 3},
    "greet-ada": {"task_id": "greet-ada", "solvable": True, "reason": "Name field and Save button exist.",
                  "checker": "return document.querySelector('#greeting')?.textContent === 'Hello, Ada!';",
                  "solution": [{"action": "fill", "selector": "#name", "value": "Ada"},
                               {"action": "click", "selector": "#save"}]},
    "reset": {"task_id": "reset", "solvable": False, "reason": "There is no reset control."},
}


def answer(*entries: dict, text_before: str = "") -> object:
    return reply_text(text_before + json.dumps({"verdicts": list(entries)}), prompt_tokens=30, completion_tokens=12)


def client_for(server: ScriptedOpenAIServer, tmp_path) -> ModelClient:
    return ModelClient(scripted_registry(server), cache=CallCache(tmp_path / "cache", enabled=False))


def last_user_text(request) -> str:
    content = request.json["messages"][-1]["content"]
    return content if isinstance(content, str) else " ".join(p.get("text", "") for p in content)


async def test_good_reply_gives_gated_checkers_and_writes_verdicts(counter_spec, counter_html, tmp_path):
    with ScriptedOpenAIServer([answer(*GOOD.values(), text_before="Here you go:\n")]) as server:
        verdicts = await verify_app(
            counter_spec, counter_html, verifier="scripted", client=client_for(server, tmp_path), out_dir=tmp_path
        )
    assert len(server.distinct_requests()) == 1
    messages = server.distinct_requests()[0].json["messages"]
    assert messages[0]["role"] == "system" and "end state" in messages[0]["content"]
    assert 'id="inc"' in messages[1]["content"] and '"task_id": "greet-ada"' in messages[1]["content"]

    add, greet, reset = verdicts.verdicts
    assert add.valid and add.checker_kind == "rule" and "__read" in add.checker
    assert greet.valid and greet.checker_kind == "js" and greet.gate.accepted
    assert not reset.valid and reset.reasons == ["There is no reset control."]
    assert [v.proof for v in verdicts.verdicts] == ["proven", "proven", "unsupported"]
    assert add.proven and [s.selector for s in add.solution] == ["#inc"] * 3 and "3-step solution" in add.proof_reason
    assert verdicts.function_completeness_proven == pytest.approx(2 / 3, abs=1e-6)
    assert verdicts.verifier == "scripted" and not verdicts.offline and add.model == "scripted"
    assert verdicts.tokens.calls == 1 and verdicts.tokens.total_tokens == 42
    assert [v.tokens for v in verdicts.verdicts] == [14, 14, 14]
    assert function_completeness(verdicts).numerator == 2
    assert verdicts.function_completeness == pytest.approx(2 / 3, abs=1e-6)
    assert read_verdicts(tmp_path) == verdicts
    assert verdicts.checkers() == {"add-three": add.checker, "greet-ada": greet.checker}
    assert set(verdicts.unsupported()) == {"reset"}


async def test_malformed_json_is_repaired_once_quoting_the_error(counter_spec, counter_html, tmp_path):
    script = [reply_text('{"verdicts": [{"task_id": "add-three", "solvable": tru'), answer(*GOOD.values())]
    with ScriptedOpenAIServer(script) as server:
        verdicts = await verify_app(counter_spec, counter_html, verifier="scripted", client=client_for(server, tmp_path))
    assert len(server.distinct_requests()) == 2
    repair = server.distinct_requests()[1].json["messages"]
    assert [m["role"] for m in repair] == ["system", "user", "assistant", "user"]
    assert "not valid JSON" in last_user_text(server.distinct_requests()[1])
    assert [v.valid for v in verdicts.verdicts] == [True, True, False]
    assert verdicts.tokens.calls == 2


async def test_schema_violation_is_repaired_quoting_where_and_what(counter_spec, counter_html, tmp_path):
    no_checker = {**GOOD["greet-ada"]}
    del no_checker["checker"]
    script = [answer(GOOD["add-three"], no_checker, GOOD["reset"]), answer(*GOOD.values())]
    with ScriptedOpenAIServer(script) as server:
        verdicts = await verify_app(counter_spec, counter_html, verifier="scripted", client=client_for(server, tmp_path))
    assert len(server.distinct_requests()) == 2
    quoted = last_user_text(server.distinct_requests()[1])
    assert "verdicts/1" in quoted and "needs a non-empty 'checker'" in quoted
    assert verdicts.verdict("greet-ada").valid


async def test_reply_still_broken_after_the_repairs_makes_every_task_unsolvable(counter_spec, counter_html, tmp_path):
    broken = answer({"task_id": "add-three", "solvable": "yes", "reason": "sure"})
    with ScriptedOpenAIServer([broken, broken, answer(*GOOD.values())]) as server:
        verdicts = await verify_app(
            counter_spec, counter_html, verifier="scripted", client=client_for(server, tmp_path),
            config=LLMVerifierConfig(format_repairs=1),
        )
    assert len(server.distinct_requests()) == 2  # bounded: one ask plus one repair
    assert not any(v.valid for v in verdicts.verdicts)
    assert all("unusable after 1 repair(s)" in v.reason and "solvable" in v.reason for v in verdicts.verdicts)


async def test_task_missing_from_the_reply_is_unsolvable_with_a_reason(counter_spec, counter_html, tmp_path):
    with ScriptedOpenAIServer([answer(GOOD["add-three"], GOOD["reset"])]) as server:
        verdicts = await verify_app(counter_spec, counter_html, verifier="scripted", client=client_for(server, tmp_path))
    assert len(server.distinct_requests()) == 1
    missing = verdicts.verdict("greet-ada")
    assert not missing.solvable and missing.checker is None
    assert "did not include this task" in missing.reason
    assert verdicts.verdict("add-three").valid


async def test_checker_failing_the_gate_gets_one_repair_with_the_failure(counter_spec, counter_html, tmp_path):
    true_at_load = {**GOOD["add-three"], "checker": "return document.querySelector('#count').textContent === '0';"}
    del true_at_load["rule"]
    fixed = {**GOOD["add-three"], "checker": "return document.querySelector('#count')?.textContent === '3';"}
    del fixed["rule"]
    script = [answer(true_at_load, GOOD["greet-ada"], GOOD["reset"]), answer(fixed)]
    with ScriptedOpenAIServer(script) as server:
        verdicts = await verify_app(counter_spec, counter_html, verifier="scripted", client=client_for(server, tmp_path))
    assert len(server.distinct_requests()) == 2
    repair = last_user_text(server.distinct_requests()[1])
    assert "task add-three" in repair and "already true on the freshly loaded app" in repair
    assert "greet-ada" not in repair
    add = verdicts.verdict("add-three")
    assert add.valid and add.repairs == 1 and add.checker_source == fixed["checker"]
    assert any("already true" in w for w in add.warnings)


async def test_checker_failing_the_gate_twice_is_unsolvable_with_both_reasons(counter_spec, counter_html, tmp_path):
    app_state = {**GOOD["add-three"], "checker": "return window.appState.score === 3;"}
    del app_state["rule"]
    script = [answer(app_state, GOOD["greet-ada"], GOOD["reset"]), answer(app_state), answer(*GOOD.values())]
    with ScriptedOpenAIServer(script) as server:
        verdicts = await verify_app(counter_spec, counter_html, verifier="scripted", client=client_for(server, tmp_path))
    assert len(server.distinct_requests()) == 2  # one repair round-trip, no more
    add = verdicts.verdict("add-three")
    assert not add.solvable and add.checker is None and add.repairs == 1
    assert "still failed the gate" in add.reason and "window.appState" in add.reason
    assert verdicts.verdict("greet-ada").valid


async def test_tasks_are_sent_in_batches_with_only_their_own_ids(counter_spec, counter_html, tmp_path):
    def script(request):
        asked = request.json["messages"][1]["content"]
        return answer(*(entry for task_id, entry in GOOD.items() if f'"task_id": "{task_id}"' in asked))

    with ScriptedOpenAIServer(script) as server:
        verdicts = await verify_app(
            counter_spec, counter_html, verifier="scripted", client=client_for(server, tmp_path),
            config=LLMVerifierConfig(batch_size=2),
        )
    asked = sorted(
        tuple(t for t in GOOD if f'"task_id": "{t}"' in r.json["messages"][1]["content"]) for r in server.distinct_requests()
    )
    assert asked == [("add-three", "greet-ada"), ("reset",)]
    assert verdicts.task_ids() == ["add-three", "greet-ada", "reset"]
    assert [v.valid for v in verdicts.verdicts] == [True, True, False]


async def test_screenshot_of_the_loaded_app_is_attached_when_asked(counter_spec, counter_html, tmp_path):
    with ScriptedOpenAIServer([answer(*GOOD.values())]) as server:
        await verify_app(
            counter_spec, counter_html, verifier="scripted", client=client_for(server, tmp_path),
            config=LLMVerifierConfig(screenshot=True),
        )
    assert server.distinct_requests()[0].count_images() == 1


async def test_offline_model_in_the_registry_takes_the_reference_path(counter_spec, counter_html, tmp_path):
    with ScriptedOpenAIServer([]) as server:
        verdicts = await verify_app(counter_spec, counter_html, verifier="offline", client=client_for(server, tmp_path))
        by_role = await verify_app(
            counter_spec, counter_html, verifier="verifier",
            client=ModelClient(scripted_registry(server).with_roles({"verifier": "offline"}), cache=False),
        )
    assert server.requests == []
    assert verdicts.offline and verdicts.verifier == "offline" and by_role.offline
    assert [v.valid for v in verdicts.verdicts] == [True, True, False]
    assert "no reference checker" in verdicts.verdict("reset").reason


async def test_unknown_verifier_name_is_an_error_naming_it(counter_spec, counter_html, tmp_path):
    with ScriptedOpenAIServer([]) as server:
        with pytest.raises(UnknownModelError, match="no-such-model"):
            await verify_app(counter_spec, counter_html, verifier="no-such-model", client=client_for(server, tmp_path))


async def test_model_failing_for_good_raises_its_own_error_not_a_group(counter_spec, counter_html, tmp_path):
    with ScriptedOpenAIServer([reply_status(400, message="bad request")]) as server:
        with pytest.raises(ModelCallError, match="400|bad request"):
            await verify_app(counter_spec, counter_html, verifier="scripted", client=client_for(server, tmp_path))


def with_solution(entry: dict, *steps: dict) -> dict:
    return {**entry, "solution": list(steps)}


INC = {"action": "click", "selector": "#inc"}


async def test_a_solution_that_leaves_the_checker_false_is_repaired_with_its_value_and_then_proven(
    counter_spec, counter_html, tmp_path
):
    two_clicks = with_solution(GOOD["add-three"], INC, INC)
    script = [answer(two_clicks, GOOD["greet-ada"], GOOD["reset"]), answer(GOOD["add-three"])]
    with ScriptedOpenAIServer(script) as server:
        verdicts = await verify_app(counter_spec, counter_html, verifier="scripted", client=client_for(server, tmp_path))
    assert len(server.distinct_requests()) == 2
    repair = last_user_text(server.distinct_requests()[1])
    assert "- task add-three: passed the gate at load, but was not proven: the checker returned false after the replay " \
           "of the 2-step solution; after the replay '#count' shows text '2'" in repair
    assert '"selector": "#inc"' in repair and "greet-ada" not in repair
    add = verdicts.verdict("add-three")
    assert add.proven and add.repairs == 1 and len(add.solution) == 3
    assert add.warnings[0].startswith("first attempt: passed the gate at load, but was not proven")


async def test_a_repair_that_does_worse_keeps_the_first_checker_as_claimed(counter_spec, counter_html, tmp_path):
    missing_step = with_solution(GOOD["greet-ada"], {"action": "fill", "selector": "#name", "value": "Ada"},
                                 {"action": "click", "selector": "#submit"})
    worse = {**GOOD["greet-ada"], "checker": "return document.querySelector('#greeting').textContent === 'Hello, Ada!' || true;"}
    script = [answer(GOOD["add-three"], missing_step, GOOD["reset"]), answer(worse)]
    with ScriptedOpenAIServer(script) as server:
        verdicts = await verify_app(counter_spec, counter_html, verifier="scripted", client=client_for(server, tmp_path),
                                    config=LLMVerifierConfig(proof_step_timeout_ms=1_000))
    assert "solution step 2 (click #submit) failed" in last_user_text(server.distinct_requests()[1])
    assert "no element matches '#submit'" in last_user_text(server.distinct_requests()[1])
    greet = verdicts.verdict("greet-ada")
    assert greet.proof == "claimed" and greet.valid and greet.repairs == 1
    assert greet.checker_source == GOOD["greet-ada"]["checker"]
    assert greet.proof_reason.startswith("solution step 2 (click #submit) failed")
    assert any(w.startswith("the repaired checker was not kept (rejected by the validation gate") for w in greet.warnings)
    assert verdicts.function_completeness == pytest.approx(2 / 3, abs=1e-6)
    assert verdicts.function_completeness_proven == pytest.approx(1 / 3, abs=1e-6)


async def test_a_task_judged_unsolvable_on_repair_is_unsupported(counter_spec, counter_html, tmp_path):
    no_solution = {**GOOD["add-three"]}
    del no_solution["solution"]
    gave_up = {"task_id": "add-three", "solvable": False, "reason": "on reflection the count never reaches 3"}
    script = [answer(no_solution, GOOD["greet-ada"], GOOD["reset"]), answer(gave_up)]
    with ScriptedOpenAIServer(script) as server:
        verdicts = await verify_app(counter_spec, counter_html, verifier="scripted", client=client_for(server, tmp_path))
    assert "could not be proven: no solution was given" in last_user_text(server.distinct_requests()[1])
    add = verdicts.verdict("add-three")
    assert add.proof == "unsupported" and not add.valid and add.repairs == 1
    assert add.proof_reason == "on reflection the count never reaches 3"
