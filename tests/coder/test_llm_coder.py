"""The LLM coder through the real openai client against the scripted OpenAI-protocol server."""

import pytest

from coder import (
    REVISION_RULES,
    STYLE_BLOCK,
    Feedback,
    HtmlExtractionError,
    Regression,
    RevisionRequest,
    UnsupportedTask,
    get_coder,
    style_block_default,
)
from cua import Viewport
from llm.testing import reply_text


CHECKER = "return document.querySelector('#count').textContent === '3';"


def fenced(html: str, chatter: str = "Here is the file.") -> str:
    return f"{chatter}\n```html\n{html}```\nLet me know if you need changes."


def user_text(request) -> str:
    return "\n".join(m["content"] for m in request.json["messages"] if m["role"] == "user")


async def test_generate_sends_the_app_prompt_and_requirements_and_returns_the_extracted_file(scripted, counter_app, counter_html):
    server, client = scripted([reply_text(fenced(counter_html))])
    result = await get_coder("scripted", client).generate(counter_app)
    assert result.html == counter_html
    assert (result.model, result.offline, result.attempts, result.usage.calls) == ("scripted", False, 1, 1)
    sent = user_text(server.distinct_requests()[0])
    for needle in ("Name: Counter", "Increment", "self-contained HTML", "No external libraries", "unique", "1280x720"):
        assert needle in sent
    assert server.distinct_requests()[0].json["messages"][0]["role"] == "system"


async def test_truncated_reply_is_retried_with_a_nudge_and_the_complete_one_is_used(scripted, counter_app, counter_html):
    cut = fenced(counter_html)[:120]
    server, client = scripted([reply_text(cut, finish_reason="length"), reply_text(fenced(counter_html))])
    result = await get_coder("scripted", client).generate(counter_app)
    assert result.html == counter_html
    assert (result.attempts, result.truncated_attempts) == (2, 1)
    assert "cut off" in user_text(server.distinct_requests()[1]) and "cut off" not in user_text(server.distinct_requests()[0])


async def test_truncation_retries_are_bounded_and_then_raise_naming_the_model(scripted, counter_app):
    half = "```html\n<!DOCTYPE html><html><body><p>never ends"
    server, client = scripted([reply_text(half)] * 5)
    coder = get_coder("scripted", client, max_truncation_retries=1)
    with pytest.raises(HtmlExtractionError) as caught:
        await coder.generate(counter_app)
    assert caught.value.truncated and "scripted" in str(caught.value)
    assert len(server.distinct_requests()) == 2


async def test_a_non_html_reply_is_asked_again_with_a_nudge_and_the_html_one_is_used(scripted, counter_app, counter_html):
    server, client = scripted([reply_text("I cannot build apps, sorry."), reply_text(fenced(counter_html))])
    result = await get_coder("scripted", client).generate(counter_app)
    assert result.html == counter_html
    assert (result.attempts, result.truncated_attempts) == (2, 0)
    assert "no HTML document" in user_text(server.distinct_requests()[1]) and "no HTML" not in user_text(server.distinct_requests()[0])


async def test_non_html_replies_are_retried_a_bounded_number_of_times_then_raise_naming_app_and_model(scripted, counter_app):
    server, client = scripted([reply_text("I cannot build apps, sorry.")] * 5)
    with pytest.raises(HtmlExtractionError) as caught:
        await get_coder("scripted", client).generate(counter_app)
    message = str(caught.value)
    assert "model 'scripted'" in message and "app 'counter'" in message and not caught.value.truncated
    assert "no HTML document in any of 3 attempts" in message
    assert len(server.distinct_requests()) == 3  # the first try and max_truncation_retries (2) more


def request_for(mode, counter_app, counter_html, **fields):
    return RevisionRequest(
        mode=mode, app=counter_app, html=counter_html, checkers=[CHECKER],
        unsupported=[UnsupportedTask(task_id="undo-last", description="Undo the last increment.",
                                     reason="no undo control exists")],
        feedback=[Feedback(issues=["The reset button was hard to find"],
                           actionable_changes=["Make #reset at least 44x44 px (interaction robustness)"])],
        **fields,
    )


@pytest.mark.parametrize(("mode", "has_unsupported", "has_feedback"), [
    ("unsupported", True, False), ("cua", False, True), ("integrated", True, True)])
async def test_each_revision_mode_sends_only_its_inputs(scripted, counter_app, counter_html, mode, has_unsupported, has_feedback):
    server, client = scripted([reply_text(fenced(counter_html))])
    result = await get_coder("scripted", client).revise(request_for(mode, counter_app, counter_html))
    sent = user_text(server.distinct_requests()[0])
    assert ("no undo control exists" in sent and "undo-last" in sent) == has_unsupported
    assert ("Make #reset at least 44x44 px" in sent) == has_feedback
    assert "#count" in sent and "increment" in sent  # the contract is stated up front
    assert counter_html.strip() in sent
    assert REVISION_RULES in sent
    # The paper's setting: de-stylised when the agent's attempts drive the revision.
    assert (STYLE_BLOCK in sent) == (mode != "unsupported") == result.style_block
    assert result.mode == mode and result.contract.status == "kept" and not result.contract.retried
    assert result.unsupported_task_ids == (["undo-last"] if has_unsupported else [])


async def test_a_revision_with_nothing_to_act_on_makes_no_model_call(scripted, counter_app, counter_html):
    server, client = scripted([reply_text("unused")])
    request = RevisionRequest(mode="unsupported", app=counter_app, html=counter_html, checkers=[CHECKER],
                              feedback=[Feedback(actionable_changes=["ignored in this mode (state visibility)"])])
    result = await get_coder("scripted", client).revise(request)
    assert server.requests == [] and result.html == counter_html and not result.changed and result.attempts == 0


async def test_style_block_is_added_when_asked(scripted, counter_app, counter_html):
    server, client = scripted([reply_text(fenced(counter_html))])
    await get_coder("scripted", client).revise(request_for("cua", counter_app, counter_html, style_block=True))
    assert STYLE_BLOCK in user_text(server.distinct_requests()[0])


async def test_a_revision_for_a_1024x768_viewport_asks_for_1024x768(scripted, counter_app, counter_html):
    server, client = scripted([reply_text(fenced(counter_html))])
    request = request_for("integrated", counter_app, counter_html, viewport=Viewport.parse("1024x768"))
    request.feedback.append(Feedback(fit_within_screen=True))
    await get_coder("scripted", client).revise(request)
    sent = user_text(server.distinct_requests()[0])
    assert "The app works in a 1024x768 browser viewport" in sent  # the requirements
    assert "fit inside a 1024x768 viewport" in sent  # the style block
    assert "inside the 1024x768 viewport without scrolling" in sent  # the merged feedback
    assert "1280" not in sent and STYLE_BLOCK not in sent


async def test_a_first_version_for_a_1024x768_viewport_asks_for_1024x768(scripted, counter_app, counter_html):
    server, client = scripted([reply_text(fenced(counter_html))])
    await get_coder("scripted", client).generate(counter_app, viewport=Viewport.parse("1024x768"))
    sent = user_text(server.distinct_requests()[0])
    assert "The app works in a 1024x768 browser viewport" in sent and "1280" not in sent


def test_the_style_block_is_on_by_default_for_the_cua_and_integrated_modes_only():
    assert [style_block_default(mode) for mode in ("unsupported", "cua", "integrated")] == [False, True, True]
    with pytest.raises(ValueError):
        style_block_default("sideways")


@pytest.mark.parametrize(("mode", "explicit"), [("unsupported", True), ("cua", False), ("integrated", False)])
async def test_an_explicit_style_block_choice_wins_over_the_modes_default(scripted, counter_app, counter_html, mode, explicit):
    server, client = scripted([reply_text(fenced(counter_html))])
    result = await get_coder("scripted", client).revise(request_for(mode, counter_app, counter_html, style_block=explicit))
    sent = user_text(server.distinct_requests()[0])
    assert (STYLE_BLOCK in sent) == explicit == result.style_block
    assert REVISION_RULES in sent


async def test_the_revision_rules_name_the_guard_against_shown_states_without_changes(scripted, counter_app, counter_html):
    server, client = scripted([reply_text(fenced(counter_html))])
    await get_coder("scripted", client).revise(request_for("unsupported", counter_app, counter_html))
    sent = user_text(server.distinct_requests()[0])
    for rule in ("validation permissive", "Start no flow by itself on load", "Change surgically", "no confirmation steps",
                 "Never show a state without the state change behind it"):
        assert rule in sent


REGRESSION = Regression(task_id="count-to-three", description="Count to three.",
                        agent_attempt="clicked #inc three times; #count stayed 0")


@pytest.mark.parametrize("mode", ["unsupported", "cua", "integrated"])
async def test_regressions_are_sent_first_to_fix_when_given(scripted, counter_app, counter_html, mode):
    server, client = scripted([reply_text(fenced(counter_html))])
    result = await get_coder("scripted", client).revise(
        request_for(mode, counter_app, counter_html, regressions=[REGRESSION]))
    sent = user_text(server.distinct_requests()[0])
    assert "worked before your last change" in sent
    assert "[count-to-three] Count to three." in sent and "#count stayed 0" in sent
    # before the tasks and the feedback: what broke is fixed first
    assert sent.index("worked before your last change") < min(
        sent.index(text) for text in ("Reviewer feedback", "Tasks the current version") if text in sent)
    assert result.regression_task_ids == ["count-to-three"]


async def test_without_regressions_the_prompt_says_nothing_about_them(scripted, counter_app, counter_html):
    server, client = scripted([reply_text(fenced(counter_html))])
    result = await get_coder("scripted", client).revise(request_for("integrated", counter_app, counter_html))
    assert "worked before" not in user_text(server.distinct_requests()[0]) and result.regression_task_ids == []


async def test_a_cua_revision_with_nothing_to_act_on_is_not_restyled_by_default(scripted, counter_app, counter_html):
    server, client = scripted([reply_text("unused")])
    request = RevisionRequest(mode="cua", app=counter_app, html=counter_html, checkers=[CHECKER])
    result = await get_coder("scripted", client).revise(request)
    assert server.requests == [] and not result.changed and result.style_block


async def test_regressions_alone_are_something_to_act_on(scripted, counter_app, counter_html):
    server, client = scripted([reply_text(fenced(counter_html))])
    request = RevisionRequest(mode="unsupported", app=counter_app, html=counter_html, checkers=[CHECKER],
                              regressions=[Regression(task_id="count-to-three", description="Count to three.")])
    await get_coder("scripted", client).revise(request)
    sent = user_text(server.distinct_requests()[0])
    assert "[count-to-three] Count to three." in sent and "What the agent did" not in sent


async def test_a_revision_dropping_a_checker_id_gets_one_retry_listing_it(scripted, counter_app, counter_html):
    dropped = counter_html.replace("id='count'", "id='total'")
    server, client = scripted([reply_text(fenced(dropped)), reply_text(fenced(counter_html))])
    result = await get_coder("scripted", client).revise(request_for("integrated", counter_app, counter_html))
    retry = server.distinct_requests()[1].json["messages"]
    assert retry[-2] == {"role": "assistant", "content": fenced(dropped)}
    assert "#count" in retry[-1]["content"] and "dropped" in retry[-1]["content"]
    assert result.html == counter_html
    contract = result.contract
    assert (contract.status, contract.retried, contract.first_missing_ids, contract.missing_ids) == (
        "kept_after_retry", True, ["count"], [])
    assert result.attempts == 2


async def test_a_violation_that_survives_the_retry_is_recorded_not_hidden(scripted, counter_app, counter_html):
    broken = counter_html.replace("function increment()", "function bump()").replace("= increment", "= bump")
    server, client = scripted([reply_text(fenced(broken)), reply_text(fenced(broken)), reply_text("unused")])
    result = await get_coder("scripted", client).revise(request_for("cua", counter_app, counter_html))
    assert len(server.distinct_requests()) == 2  # exactly one retry
    assert "increment()" in server.distinct_requests()[1].json["messages"][-1]["content"]
    assert (result.contract.status, result.contract.missing_functions) == ("violated", ["increment"])
    assert result.html == broken


async def test_calls_are_accounted_to_the_coder_role_when_the_coder_is_named_by_model(scripted, counter_app, counter_html):
    server, client = scripted([reply_text(fenced(counter_html))])
    registry = client.registry.with_roles({"coder": "offline"})  # the role points elsewhere
    from llm import ModelClient

    shared = ModelClient(registry, cache=False, retry=client.retry)
    await get_coder("scripted", shared).generate(counter_app)
    assert [record.role for record in shared.ledger.records] == ["coder"]
    assert shared.ledger.records[0].model == "scripted"


def test_an_offline_model_name_gets_the_offline_coder(scripted):
    _, client = scripted([])
    assert get_coder("offline", client).offline
    assert type(get_coder("scripted", client)).__name__ == "LLMCoder"


async def test_detected_gui_defects_alone_are_something_to_act_on_and_reach_the_prompt(scripted, counter_app, counter_html):
    """`--feedback defects`: the detector's statements (`Feedback.defects`) are lines of the coder's feedback."""
    server, client = scripted([reply_text(fenced(counter_html))])
    defect = "`#inc` (task count-to-three, step 2, click(100,120)): no-response — the click changed nothing in the DOM"
    request = RevisionRequest(mode="cua", app=counter_app, html=counter_html, checkers=[CHECKER],
                              feedback=[Feedback(defects=[defect])])
    result = await get_coder("scripted", client).revise(request)
    assert f"GUI defect: {defect}" in user_text(server.distinct_requests()[0]) and result.feedback_lines == 1
