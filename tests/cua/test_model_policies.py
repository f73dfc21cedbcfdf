"""UI-TARS and OpenAI computer-use policies through the real `openai` client and a local
OpenAI-protocol server with scripted replies. Each scripted click is given in the model's own
coordinate space; the app's state changing proves it landed on the intended element."""

import base64
import json

import pytest

from apps_prompts import AnswerCheck
from cua import BrowserConfig, RolloutConfig, TerminationReason, Trajectory, Viewport, isolated_world, rollout
from cua.policies import get_policy, uitars_task_of_request
from cua.policies._uitars_prompts import prompt_for
from llm import CallCache, ModelClient
from llm.testing import ScriptedOpenAIServer, reply_responses, reply_text, scripted_registry
from tests.cua.cua_lab import INC_BUTTON, LAB

CONFIG = RolloutConfig(max_steps=6, step_timeout_s=30, model_timeout_s=15, episode_timeout_s=90)

# A 14×14 target in the bottom-right corner, centred on screen (1260, 700). Read as screen
# pixels, the UI-TARS-1.5 point for it, (1268, 708), would miss: the conversion must happen.
CORNER = """<!doctype html><body style="margin:0">
<button id="corner" style="position:absolute;left:1253px;top:693px;width:14px;height:14px;padding:0"></button>
<span id="hits">0</span>
<script>document.getElementById('corner').onclick = () => {
  const h = document.getElementById('hits'); h.textContent = String(Number(h.textContent) + 1); };</script></body>"""


def hits_at_least(n: int, selector: str = "#hits"):
    async def checker(page) -> bool:
        return bool(await isolated_world(page).evaluate(f"Number(document.querySelector({selector!r}).textContent) >= {n}"))

    return checker


@pytest.fixture
def client_for(tmp_path):
    def make(server: ScriptedOpenAIServer) -> ModelClient:
        return ModelClient(scripted_registry(server), cache=CallCache(tmp_path / "llm-cache", enabled=False))

    return make


def chat_messages(server, index):
    return server.distinct_requests("chat")[index].json["messages"]


# ---- UI-TARS -------------------------------------------------------------------------------


async def test_uitars_15_click_in_smart_resized_pixels_hits_the_corner_target(tmp_path, client_for):
    reply = "Thought: The small button sits in the bottom-right corner.\nAction: click(start_box='(1268,708)')"
    with ScriptedOpenAIServer([reply_text(reply, prompt_tokens=900, completion_tokens=30)]) as server:
        policy = get_policy("uitars", model="scripted", client=client_for(server), prompt="compact")
        trajectory = await rollout(CORNER, "Press the corner button", policy, hits_at_least(1), tmp_path / "r", CONFIG)
    assert trajectory.termination == TerminationReason.success
    step = trajectory.steps[0]
    assert step.target.id == "corner"
    assert step.screen_action.point.x == pytest.approx(1268 * 1280 / 1288, abs=0.01)
    assert step.thought == "The small button sits in the bottom-right corner." and step.raw_text == reply
    assert (step.tokens.prompt, step.tokens.completion) == (900, 30)
    assert trajectory.model == "scripted" and trajectory.coordinate_space == "uitars-1.5"
    messages = chat_messages(server, 0)
    assert messages[0]["role"] == "system" and "Press the corner button" in messages[0]["content"]
    assert "drag(start_point=" in messages[0]["content"] and "Thought:" in messages[0]["content"]
    user = messages[1]["content"]
    assert any(p["type"] == "text" and "Step 1 of at most 6" in p["text"] for p in user)
    assert any(p["type"] == "image_url" and p["image_url"]["url"].startswith("data:image/png;base64,") for p in user)


async def test_uitars_10_click_in_relative_coordinates_hits_the_corner_target(tmp_path, client_for):
    reply = "Thought: corner.\nAction: click(point='<point>984 972</point>')"  # 984/1000·1280, 972/1000·720
    with ScriptedOpenAIServer([reply_text(reply)]) as server:
        policy = get_policy("uitars", model="scripted", client=client_for(server), coordinate_space="uitars-1.0",
                            prompt="compact")
        trajectory = await rollout(CORNER, "Press the corner button", policy, hits_at_least(1), tmp_path / "r", CONFIG)
    assert trajectory.termination == TerminationReason.success
    assert trajectory.steps[0].target.id == "corner"
    assert "0 to 1000" in chat_messages(server, 0)[0]["content"]


async def test_uitars_10_official_prompt_offers_relative_start_boxes_and_they_hit_the_corner_target(tmp_path, client_for):
    reply = "Thought: corner.\nAction: click(start_box='<|box_start|>(984,972)<|box_end|>')"
    with ScriptedOpenAIServer([reply_text(reply)]) as server:
        policy = get_policy("uitars", model="scripted", client=client_for(server), coordinate_space="uitars-1.0")
        trajectory = await rollout(CORNER, "Press the corner button", policy, hits_at_least(1), tmp_path / "r", CONFIG)
    assert trajectory.termination == TerminationReason.success and trajectory.steps[0].target.id == "corner"
    assert chat_messages(server, 0)[1]["content"] == prompt_for("official", "uitars-1.0").render("Press the corner button")


async def test_uitars_compact_keeps_all_replies_as_text_but_only_the_last_n_screenshots(tmp_path, client_for):
    x, y = INC_BUTTON[0] * 1288 / 1280, INC_BUTTON[1] * 728 / 720
    replies = [reply_text(f"Thought: add {i}\nAction: click(point='<point>{x:.1f} {y:.1f}</point>')") for i in range(4)]
    with ScriptedOpenAIServer(replies) as server:
        policy = get_policy("uitars", model="scripted", client=client_for(server), history_images=2, prompt="compact")
        trajectory = await rollout(LAB, "Add four", policy, hits_at_least(4, "#count"), tmp_path / "r", CONFIG)
    assert trajectory.termination == TerminationReason.success and len(trajectory.steps) == 4
    last = server.distinct_requests("chat")[3]
    assert last.count_images() == 2
    messages = last.json["messages"]
    assert [m["content"] for m in messages if m["role"] == "assistant"] == [
        f"Thought: add {i}\nAction: click(point='<point>{x:.1f} {y:.1f}</point>')" for i in range(3)
    ]
    roles = [m["role"] for m in messages[1:]]
    assert roles == ["user", "assistant"] * 3 + ["user"]  # turns still alternate with images dropped
    assert "screenshot no longer shown" in messages[1]["content"]


def image_parts(message) -> list[bytes]:
    content = message["content"]
    if isinstance(content, str):
        return []
    return [base64.b64decode(p["image_url"]["url"].split(",", 1)[1]) for p in content if p["type"] == "image_url"]


async def test_uitars_default_prompt_is_the_official_template_with_the_last_n_screenshots_as_bare_user_turns(
        tmp_path, client_for):
    x, y = INC_BUTTON[0] * 1288 / 1280, INC_BUTTON[1] * 728 / 720
    replies = [f"Thought: Add one more ({i}).\nAction: click(point='<point>{x:.1f} {y:.1f}</point>')" for i in range(5)]
    task = "Press Add one until the counter reads 5"
    with ScriptedOpenAIServer([reply_text(r) for r in replies]) as server:
        policy = get_policy("uitars", model="scripted", client=client_for(server), history_images=3)
        trajectory = await rollout(LAB, task, policy, hits_at_least(5, "#count"), tmp_path / "r", CONFIG)
        requests = server.distinct_requests("chat")
    assert trajectory.termination == TerminationReason.success and len(trajectory.steps) == 5
    folder = tmp_path / "r"
    shots = [(folder / name).read_bytes() for name in [trajectory.initial_screenshot] + [s.screenshot for s in trajectory.steps]]
    template = prompt_for("official", "uitars-1.5").render(task, language="English")
    assert "## User Instruction\n" + task in template and "Step 1 of" not in template
    for number, request in enumerate(requests):  # request k is made before step k + 1, seeing shots[0..k]
        messages = request.json["messages"]
        assert messages[0] == {"role": "system", "content": "You are a helpful assistant."}
        assert messages[1] == {"role": "user", "content": template}
        assert uitars_task_of_request(messages) == task  # how test doubles playing UI-TARS read the task
        shown = max(0, number + 1 - 3)  # the first turn whose screenshot is still shown
        expected = []
        for turn in range(number + 1):
            if turn >= shown:
                expected.append(("user", [shots[turn]]))
            if turn < number:
                expected.append(("assistant", replies[turn]))
        got = [(m["role"], image_parts(m) if m["role"] == "user" else m["content"]) for m in messages[2:]]
        assert got == expected, f"request {number}"
        # Image turns carry the screenshot alone, as in the published agent loop; older turns are text only.
        assert all(len(m["content"]) == 1 for m in messages[2:] if m["role"] == "user")
        assert request.count_images() == min(number + 1, 3)


async def test_uitars_default_history_is_five_screenshots_with_every_earlier_reply_as_text(tmp_path, client_for):
    # No `history_images` given: the default (5, the published agent's) must hold over a 7-step rollout.
    x, y = INC_BUTTON[0] * 1288 / 1280, INC_BUTTON[1] * 728 / 720
    replies = [f"Thought: Add one more ({i}).\nAction: click(point='<point>{x:.1f} {y:.1f}</point>')" for i in range(7)]
    config = RolloutConfig(max_steps=8, step_timeout_s=30, model_timeout_s=15, episode_timeout_s=120)
    with ScriptedOpenAIServer([reply_text(r) for r in replies]) as server:
        policy = get_policy("uitars", model="scripted", client=client_for(server))
        assert policy.history_images == 5
        trajectory = await rollout(LAB, "Press Add one until the counter reads 7", policy, hits_at_least(7, "#count"),
                                   tmp_path / "r", config)
        requests = server.distinct_requests("chat")
    assert trajectory.termination == TerminationReason.success and len(trajectory.steps) == 7
    assert len(requests) == 7
    last = requests[-1]
    assert last.count_images() == 5
    messages = last.json["messages"]
    assert [m["content"] for m in messages if m["role"] == "assistant"] == replies[:6]  # all earlier replies, as text
    folder = tmp_path / "r"
    shots = [(folder / name).read_bytes() for name in [trajectory.initial_screenshot] + [s.screenshot for s in trajectory.steps]]
    assert [shot for m in messages[2:] if m["role"] == "user" for shot in image_parts(m)] == shots[2:7]  # the last five
    assert [r.count_images() for r in requests] == [1, 2, 3, 4, 5, 5, 5]


async def test_uitars_finished_content_is_the_trajectorys_answer_after_the_checker_passed(tmp_path, client_for):
    # An answer task (stop_on_checker off): the click makes the checker true, the episode goes on to the answer.
    replies = ["Thought: The small button sits in the bottom-right corner.\nAction: click(start_box='(1268,708)')",
               "Thought: The counter reads 1, so the answer is 42.\nAction: finished(content='42')"]
    config = CONFIG.model_copy(update={"stop_on_checker": False})
    with ScriptedOpenAIServer([reply_text(r) for r in replies]) as server:
        policy = get_policy("uitars", model="scripted", client=client_for(server))
        trajectory = await rollout(CORNER, "Press the corner button, then say the answer", policy, hits_at_least(1),
                                   tmp_path / "r", config)
        assert len(server.distinct_requests("chat")) == 2
    assert [s.model_action.kind for s in trajectory.steps] == ["click", "finished"]
    assert trajectory.termination == TerminationReason.success and trajectory.checker_ever_passed
    assert trajectory.answer == "42" and Trajectory.load(tmp_path / "r").answer == "42"


async def test_uitars_finished_content_with_escaped_quotes_is_read_as_written(tmp_path, client_for):
    reply = "Thought: Done.\nAction: finished(content='It\\'s 42,\\n\\\"about\\\" that')"
    with ScriptedOpenAIServer([reply_text(reply)]) as server:
        policy = get_policy("uitars", model="scripted", client=client_for(server))
        trajectory = await rollout(CORNER, "How many?", policy, hits_at_least(1), tmp_path / "r", CONFIG)
    assert trajectory.termination == TerminationReason.finished
    assert trajectory.answer == "It's 42,\n\"about\" that"


async def test_uitars_unparseable_replies_are_re_asked_with_feedback_and_bounded(tmp_path, client_for):
    garbage = [reply_text("I am not sure what to do."), reply_text("Action: levitate()"), reply_text("Thought: hmm")]
    with ScriptedOpenAIServer(garbage, default=reply_text("Action: click(start_box='(1268,708)')")) as server:
        policy = get_policy("uitars", model="scripted", client=client_for(server))
        config = CONFIG.model_copy(update={"max_invalid_replies": 3})
        trajectory = await rollout(CORNER, "Press the corner button", policy, hits_at_least(1), tmp_path / "r", config)
        requests = len(server.distinct_requests("chat"))
    assert trajectory.termination == TerminationReason.invalid
    assert requests == 3  # bounded: the default (valid) reply was never requested
    assert trajectory.steps[0].invalid_replies == ["I am not sure what to do.", "Action: levitate()", "Thought: hmm"]
    second = chat_messages(server, 1)
    assert second[-2] == {"role": "assistant", "content": "I am not sure what to do."}
    assert any("could not be used" in p.get("text", "") for p in second[-1]["content"])


# ---- OpenAI computer-use --------------------------------------------------------------------


def computer_call(call_id, action=None, *, actions=None, safety=()):
    item = {"type": "computer_call", "id": f"cu_{call_id}", "call_id": call_id, "status": "completed",
            "pending_safety_checks": list(safety)}
    if actions is not None:
        item["actions"] = actions
    else:
        item["action"] = action
    return item


async def test_openai_cua_click_in_display_pixels_hits_the_corner_target(tmp_path, client_for):
    script = [reply_responses([computer_call("c1", {"type": "click", "x": 1260, "y": 700, "button": "left"})],
                              response_id="resp_1")]
    with ScriptedOpenAIServer(script) as server:
        policy = get_policy("openai-cua", model="scripted", client=client_for(server))
        trajectory = await rollout(CORNER, "Press the corner button", policy, hits_at_least(1), tmp_path / "r", CONFIG)
    assert trajectory.termination == TerminationReason.success
    assert trajectory.steps[0].target.id == "corner"
    body = server.distinct_requests("responses")[0].json
    assert body["tools"] == [{"type": "computer_use_preview", "display_width": 1280, "display_height": 720,
                              "environment": "browser"}]
    assert body["truncation"] == "auto" and "previous_response_id" not in body
    content = body["input"][0]["content"]
    assert content[0] == {"type": "input_text", "text": "Task: Press the corner button"}
    assert content[1]["type"] == "input_image"


async def test_openai_cua_chains_responses_acknowledges_safety_checks_and_runs_several_actions(tmp_path, client_for):
    inc = {"type": "click", "x": INC_BUTTON[0], "y": INC_BUTTON[1], "button": "left"}
    check = {"id": "sc_1", "code": "malicious_instructions", "message": "Page text asks for something odd."}
    script = [
        reply_responses([computer_call("c0", {"type": "screenshot"})], response_id="resp_0"),
        reply_responses([computer_call("c1", inc, safety=[check])], response_id="resp_1"),
        reply_responses([computer_call("c2", inc), computer_call("c3", actions=[inc, {"type": "wait"}])],
                        response_id="resp_2"),
    ]
    with ScriptedOpenAIServer(script) as server:
        policy = get_policy("openai-cua", model="scripted", client=client_for(server))
        trajectory = await rollout(LAB, "Add three", policy, hits_at_least(3, "#count"), tmp_path / "r", CONFIG)
    assert trajectory.termination == TerminationReason.success
    assert [s.model_action.kind for s in trajectory.steps] == ["click", "click", "click"]
    assert any("malicious_instructions" in note for note in trajectory.steps[0].notes)
    requests = [r.json for r in server.distinct_requests("responses")]
    assert len(requests) == 3
    # The screenshot request was answered at once, inside the same decision.
    assert requests[1]["previous_response_id"] == "resp_0"
    assert requests[1]["input"][0]["call_id"] == "c0" and requests[1]["input"][0]["output"]["type"] == "computer_screenshot"
    third = requests[2]
    assert third["previous_response_id"] == "resp_1"
    assert third["input"][0]["call_id"] == "c1"
    assert third["input"][0]["acknowledged_safety_checks"] == [check]


async def test_openai_cua_message_without_a_call_finishes_the_episode(tmp_path, client_for):
    message = {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "All done."}]}
    with ScriptedOpenAIServer([reply_responses([message])]) as server:
        policy = get_policy("openai-cua", model="scripted", client=client_for(server))
        trajectory = await rollout(CORNER, "Press the corner button", policy, hits_at_least(1), tmp_path / "r", CONFIG)
    assert trajectory.termination == TerminationReason.finished
    assert trajectory.steps[0].model_action.text == "All done."
    assert trajectory.answer == "All done."


async def test_openai_cua_final_message_is_the_trajectorys_answer(tmp_path, client_for):
    message = {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "42"}]}
    script = [reply_responses([computer_call("c1", {"type": "click", "x": 1260, "y": 700, "button": "left"})],
                              response_id="resp_1"),
              reply_responses([message], response_id="resp_2")]
    config = CONFIG.model_copy(update={"stop_on_checker": False})
    with ScriptedOpenAIServer(script) as server:
        policy = get_policy("openai-cua", model="scripted", client=client_for(server))
        trajectory = await rollout(CORNER, "Press the corner button, then answer: what is six times seven?", policy,
                                   hits_at_least(1), tmp_path / "r", config)
        assert len(server.distinct_requests("responses")) == 2
    assert [s.model_action.kind for s in trajectory.steps] == ["click", "finished"]
    assert trajectory.success and trajectory.checker_ever_passed
    assert trajectory.answer == "42" and Trajectory.load(tmp_path / "r").answer == "42"


async def test_openai_cua_display_is_the_viewport_and_the_final_message_is_the_agents_answer(tmp_path, client_for):
    # A 1024×768 browser: the tool declares that display, and its pixels are the screen's.
    app = CORNER.replace("left:1253px;top:693px", "left:997px;top:741px")  # centred on (1004, 748)
    config = CONFIG.model_copy(update={"browser": BrowserConfig(viewport=Viewport(width=1024, height=768))})
    answer = "I pressed the corner button once; the counter now reads 1."
    message = {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": answer}]}
    script = [reply_responses([computer_call("c1", {"type": "click", "x": 1004, "y": 748, "button": "left"})],
                              response_id="resp_1"),
              reply_responses([message], response_id="resp_2")]
    with ScriptedOpenAIServer(script) as server:
        policy = get_policy("openai-cua", model="scripted", client=client_for(server))
        trajectory = await rollout(app, "Press the corner button, then say what you did", policy, hits_at_least(2),
                                   tmp_path / "r", config)
        requests = [r.json for r in server.distinct_requests("responses")]
    for body in requests:
        assert body["tools"] == [{"type": "computer_use_preview", "display_width": 1024, "display_height": 768,
                                  "environment": "browser"}]
    assert trajectory.steps, (trajectory.error, trajectory.termination)
    assert trajectory.steps[0].target.id == "corner" and trajectory.steps[0].screen_action.point.x == 1004
    assert trajectory.termination == TerminationReason.finished
    saved = Trajectory.load(tmp_path / "r")  # what the dashboard, the commenter and the report read
    assert (saved.viewport_width, saved.viewport_height) == (1024, 768)
    final = saved.steps[-1]
    assert final.model_action.kind == "finished" and final.model_action.text == answer
    assert final.thought == answer and answer in final.raw_text


async def test_openai_cua_unusable_actions_are_invalid_and_bounded_and_every_call_is_answered(tmp_path, client_for):
    script = [reply_responses([computer_call(f"bad{i}", {"type": "teleport", "x": 1, "y": 2})], response_id=f"resp_{i}")
              for i in range(2)]
    with ScriptedOpenAIServer(script, default=reply_responses([computer_call("ok", {"type": "click", "x": 1260, "y": 700})])) as server:
        policy = get_policy("openai-cua", model="scripted", client=client_for(server))
        config = CONFIG.model_copy(update={"max_invalid_replies": 2})
        trajectory = await rollout(CORNER, "Press the corner button", policy, hits_at_least(1), tmp_path / "r", config)
        requests = [r.json for r in server.distinct_requests("responses")]
    assert trajectory.termination == TerminationReason.invalid
    assert len(requests) == 2
    assert "teleport" in trajectory.steps[0].error
    assert requests[1]["input"][0]["call_id"] == "bad0"  # the unusable call still got its output
    assert any("could not be used" in json.dumps(item) for item in requests[1]["input"])


# ---- answer checks, scored on the agent's final answer (issue 16) ---------------------------


ANSWER_CHECKS = [  # (check, passes on "42")
    (AnswerCheck(expected="42", match="exact"), True),
    (AnswerCheck(expected=" 42. ", match="normalized"), True),
    (AnswerCheck(expected=r"^4\d$", match="regex"), True),
    (AnswerCheck(expected="41.8", match="number", tolerance=0.5), True),
    (AnswerCheck(expected="41", match="exact"), False),
    (AnswerCheck(expected="forty-two", match="normalized"), False),
    (AnswerCheck(expected=r"^5", match="regex"), False),
    (AnswerCheck(expected="40", match="number", tolerance=1.5), False),
]


@pytest.mark.parametrize("policy_name", ["uitars", "openai-cua"])
async def test_a_task_with_a_dom_and_an_answer_check_passes_only_when_both_do(tmp_path, client_for, policy_name):
    from verifier import score_rollout

    if policy_name == "uitars":
        script = [reply_text("Thought: The corner button.\nAction: click(start_box='(1268,708)')"),
                  reply_text("Thought: The counter reads 1, the answer is 42.\nAction: finished(content='42')")]
    else:
        message = {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "42"}]}
        script = [reply_responses([computer_call("c1", {"type": "click", "x": 1260, "y": 700, "button": "left"})],
                                  response_id="resp_1"), reply_responses([message], response_id="resp_2")]
    config = CONFIG.model_copy(update={"stop_on_checker": False})
    trajectories = {}
    for needed in (1, 2):  # the checker passes (one press is enough), or never does (two presses wanted)
        with ScriptedOpenAIServer(script) as server:
            policy = get_policy(policy_name, model="scripted", client=client_for(server))
            trajectories[needed] = await rollout(CORNER, "Press the corner button, then say six times seven", policy,
                                                 hits_at_least(needed), tmp_path / f"r{needed}", config)
    for check, passes in ANSWER_CHECKS:
        both = await score_rollout(trajectories[1], has_checker=True, checks=[check])
        assert [c.kind for c in both.checks] == ["dom", "answer"]
        assert both.checks[0].passed and both.checks[1].passed is passes, (check, both.checks[1].reason)
        assert both.passed is passes and both.answer == "42"
        no_dom = await score_rollout(trajectories[2], has_checker=True, checks=[check])
        assert not no_dom.checks[0].passed and no_dom.passed is False  # the right answer alone is not enough
