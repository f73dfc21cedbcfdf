"""The model judge through the real `openai` client against the scripted server."""

from __future__ import annotations

import base64
import io
import json
import threading
import time

import pytest
from PIL import Image

from cua import Trajectory
from dashboard_render import DASHBOARD_FILE, render_trajectory
from verifier.judge import (
    JUDGEMENTS_FILE,
    PROMPT_VERSION,
    ModelJudge,
    VerdictError,
    judge_run,
    last_screenshot,
    parse_verdict,
    prompt_sha256,
    read_judgements,
    run_trajectories,
)
from llm import DEFAULT_REPLY_CAPS, ROLES, ModelClient, load_model_registry
from llm.testing import ScriptedOpenAIServer, reply_status, reply_text, scripted_registry
from tests.verifier.judge.conftest import make_run

VALID = {"success": True, "reason": "The result field reads 8.047 km.", "confidence": 0.9}
CASES = [
    {"task_id": "first", "task": "Finish the first job.", "expected_outcome": 'The status bar reads "All done".',
     "final_text": "All done", "success": True},
    {"task_id": "second", "task": "Finish the second job.", "expected_outcome": 'The status bar reads "All done".',
     "final_text": "Nothing yet", "success": False},
]


def _client(server: ScriptedOpenAIServer) -> ModelClient:
    return ModelClient(scripted_registry(server), cache=False)


def _images(request) -> list[bytes]:
    images = []
    for message in request.json["messages"]:
        content = message["content"]
        if isinstance(content, list):
            images += [base64.b64decode(part["image_url"]["url"].split(",", 1)[1])
                       for part in content if part.get("type") == "image_url"]
    return images


def _last_user_text(request) -> str:
    content = request.json["messages"][-1]["content"]
    return content if isinstance(content, str) else " ".join(p.get("text", "") for p in content if p.get("type") == "text")


async def _judge_one(server, run_dir, mode="screenshot", **kwargs):
    ref = run_trajectories(run_dir)[0]
    return ref, await ModelJudge(_client(server), mode=mode, **kwargs).judge(ref, run_dir)


async def test_screenshot_mode_sends_the_last_screenshot_and_records_a_valid_verdict(real_run):
    with ScriptedOpenAIServer([reply_text(json.dumps(VALID), prompt_tokens=1200, completion_tokens=40)]) as server:
        ref, judgement = await _judge_one(server, real_run)
    folder = real_run / ref.trajectory_id
    [request] = server.requests
    assert _images(request) == [last_screenshot(Trajectory.load(folder), folder).read_bytes()]
    assert last_screenshot(Trajectory.load(folder), folder).name == Trajectory.load(folder).steps[-1].screenshot
    trajectory = Trajectory.load(folder)
    text = _last_user_text(request)
    assert trajectory.task in text and trajectory.expected_outcome in text
    assert "screenshot of the app (1280×720 pixels)" in request.json["messages"][0]["content"]
    assert (judgement.success, judgement.reason, judgement.confidence) == (True, VALID["reason"], 0.9)
    assert judgement.error is None and judgement.tokens == 1240
    assert (judgement.judge, judgement.offline, judgement.mode) == ("scripted", False, "screenshot")
    assert (judgement.prompt_version, judgement.prompt_sha256) == (PROMPT_VERSION, prompt_sha256("screenshot"))


async def test_flow_mode_sends_the_dashboard_without_the_checkers_verdict(real_run):
    with ScriptedOpenAIServer([reply_text(json.dumps(VALID))]) as server:
        ref, judgement = await _judge_one(server, real_run, mode="flow")
    folder = real_run / ref.trajectory_id
    [image] = _images(server.requests[0])
    assert Image.open(io.BytesIO(image)).size == (1920, 1080)
    assert image == render_trajectory(Trajectory.load(folder), folder, hide_verdict=True).png
    assert ref.checker_success and image != (folder / DASHBOARD_FILE).read_bytes()  # the stored one says SUCCESS
    assert judgement.mode == "flow" and judgement.success is True and judgement.prompt_sha256 == prompt_sha256("flow")
    assert prompt_sha256("flow") != prompt_sha256("screenshot")


async def test_a_reply_that_is_not_json_is_asked_again_once_quoting_the_error(real_run):
    script = [reply_text("The task looks done to me."), reply_text("```json\n" + json.dumps(VALID) + "\n```")]
    with ScriptedOpenAIServer(script) as server:
        _, judgement = await _judge_one(server, real_run)
    assert len(server.requests) == 2
    repair = server.requests[1]
    assert "contains no JSON object" in _last_user_text(repair)
    assert repair.json["messages"][-2] == {"role": "assistant", "content": "The task looks done to me."}
    assert repair.count_images() == 1  # the image again: the first reply held no judgement to keep
    assert judgement.success is True and judgement.error is None and judgement.tokens == 2 * (11 + 7)


async def test_a_second_bad_reply_is_an_error_with_no_verdict(real_run):
    script = [reply_text('{"success": true, "reason": "ok", "confidence": 0.8'), reply_text("still not JSON")]
    with ScriptedOpenAIServer(script) as server:
        _, judgement = await _judge_one(server, real_run)
    assert len(server.requests) == 2
    assert "not valid JSON" in _last_user_text(server.requests[1])
    assert judgement.success is None and judgement.confidence == 0.0
    assert "invalid reply after 2 attempt(s)" in judgement.error and "still not JSON" in judgement.error


async def test_a_confidence_of_7_breaks_the_schema_is_repaired_once_then_recorded_as_an_error(real_run):
    breaking = json.dumps({**VALID, "confidence": 7})
    with ScriptedOpenAIServer([reply_text(breaking), reply_text(json.dumps({**VALID, "confidence": 0.6}))]) as server:
        _, repaired = await _judge_one(server, real_run)
    assert "confidence: 7 is greater than the maximum of 1" in _last_user_text(server.requests[1])
    assert repaired.confidence == 0.6 and repaired.error is None
    with ScriptedOpenAIServer([reply_text(breaking), reply_text(breaking)]) as server:
        _, failed = await _judge_one(server, real_run)
    assert len(server.requests) == 2
    assert failed.success is None and "confidence: 7 is greater than the maximum of 1" in failed.error


@pytest.mark.parametrize("reply, fault", [
    ({"success": "yes", "reason": "ok", "confidence": 0.5}, "success: 'yes' is not of type 'boolean'"),
    ({"success": True, "reason": "ok"}, "'confidence' is a required property"),
    ({**VALID, "verdict": "pass"}, "Additional properties are not allowed ('verdict' was unexpected)"),
    ('{"success": true, "reason": "ok", "confidence": NaN}', "NaN is not a JSON number"),
    ({**VALID, "reason": ["seen"]}, "reason: ['seen'] is not of type 'string'"),
    ("true", "the reply contains no JSON object"),
])
def test_parse_verdict_names_the_fault(reply, fault):
    with pytest.raises(VerdictError) as raised:
        parse_verdict(reply if isinstance(reply, str) else json.dumps(reply))
    assert fault in str(raised.value)


def test_parse_verdict_takes_the_object_out_of_a_fence_or_a_sentence():
    assert parse_verdict("Verdict:\n```json\n" + json.dumps(VALID) + "\n```") == VALID
    assert parse_verdict("Here it is: " + json.dumps(VALID) + " — hope that helps") == VALID


async def test_a_failed_model_call_is_recorded_and_the_other_trajectories_are_judged(tmp_path):
    run_dir = make_run(tmp_path, CASES)

    def script(request):  # the endpoint refuses whatever concerns the first task
        asked = json.dumps(request.json["messages"])
        return reply_status(400, message="bad request") if "Finish the first job." in asked else reply_text(json.dumps(VALID))

    with ScriptedOpenAIServer(script) as server:
        first, second = await judge_run(run_dir, judge="judge", client=_client(server))
    assert len(server.requests) == 2  # a 400 is not retried
    assert first.task_id == "first" and first.success is None and "model call failed" in first.error
    assert second.task_id == "second" and second.success is True and second.error is None
    assert sorted(j.task_id for j in read_judgements(run_dir)) == ["first", "second"]  # both on file


async def test_a_cached_rerun_sends_no_request_and_a_changed_trajectory_is_judged_again(tmp_path):
    run_dir = make_run(tmp_path, CASES)
    with ScriptedOpenAIServer([reply_text(json.dumps(VALID))] * 10) as server:
        first = await judge_run(run_dir, judge="judge", client=_client(server))
        assert len(server.requests) == 2
        again = await judge_run(run_dir, judge="judge", client=_client(server))
        assert len(server.requests) == 2  # nothing asked: same judge, mode, prompt and trajectories
        assert [j.model_dump() for j in again] == [j.model_dump() for j in first]
        assert len((run_dir / JUDGEMENTS_FILE).read_text().splitlines()) == 2

        changed = run_dir / first[1].trajectory_id
        trajectory = Trajectory.load(changed)
        trajectory.model_copy(update={"task": trajectory.task + " Then save."}).save(changed)
        await judge_run(run_dir, judge="judge", client=_client(server))
        assert len(server.requests) == 3  # only the changed one
        await judge_run(run_dir, judge="judge", mode="flow", client=_client(server))
        assert len(server.requests) == 5  # another mode is another judge
    assert len(read_judgements(run_dir)) == 5


async def test_trajectories_are_judged_in_parallel_within_the_bound(tmp_path):
    cases = [{"task_id": f"t{i}", "task": f"Finish job {i}.", "expected_outcome": '"done"', "final_text": "done",
              "success": True} for i in range(6)]
    run_dir = make_run(tmp_path, cases)
    in_flight, peak = [0], [0]
    overlapped = threading.Condition()

    def slow(request):
        # Counts how many requests wait at once. Each is held until two have been in flight together (or 30 s:
        # a client that never sends two at once then fails on the peak, slowly), so the overlap does not depend on
        # a loaded machine sending the second request within a fixed time; then 0.3 s more, for a client that
        # would send a third to show it.
        with overlapped:
            in_flight[0] += 1
            peak[0] = max(peak[0], in_flight[0])
            overlapped.notify_all()
            overlapped.wait_for(lambda: peak[0] >= 2, timeout=30)
        time.sleep(0.3)
        with overlapped:
            in_flight[0] -= 1
        return reply_text(json.dumps(VALID))

    with ScriptedOpenAIServer(slow) as server:
        judgements = await judge_run(run_dir, judge="judge", client=_client(server), concurrency=2)
    assert len(server.requests) == 6 and all(j.success for j in judgements)
    assert peak[0] == 2  # overlapped, and never more than the bound


def test_the_judge_role_is_in_the_registry_the_scripted_registry_and_the_reply_caps():
    assert "judge" in ROLES and DEFAULT_REPLY_CAPS["judge"] == 256 * 1024
    assert load_model_registry().model_name("judge") == "gpt-5"  # configs/models.yaml
    with ScriptedOpenAIServer([]) as server:
        assert scripted_registry(server).model_name("judge") == "scripted"
