"""The model detector through the real `openai` client against the scripted server (no patched methods)."""

from __future__ import annotations

import base64
import io
import json

import pytest
from PIL import Image

from commenter.detector import (
    DETECTION_SCHEMA,
    PROMPT_VERSION,
    DetectionError,
    ModelDetector,
    get_detector,
    parse_detection,
)
from cua import DEFECT_TYPES, Action, ElementInfo, Point, TransitionTuple
from llm import ModelClient
from llm.testing import ScriptedOpenAIServer, reply_status, reply_text, scripted_registry

VALID = {"defect": True, "type": "no-response", "evidence": "The Save button was clicked and nothing changed."}


def _png(colour: str) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (64, 36), colour).save(out, format="PNG")
    return out.getvalue()


@pytest.fixture
def folder(tmp_path):
    (tmp_path / "step_000.png").write_bytes(_png("white"))
    (tmp_path / "step_001.png").write_bytes(_png("navy"))
    return tmp_path


TUPLE = TransitionTuple(app_id="app", task_id="save", step=1, before="step_000.png", after="step_001.png",
                        action=Action(kind="click", point=Point(x=40, y=20)), action_text="click(40,20)",
                        element=ElementInfo(tag="button", id="save", text="Save"), dom_changed=False,
                        defect="no-response", viewport_width=64, viewport_height=36)


def _client(server) -> ModelClient:
    return ModelClient(scripted_registry(server), cache=False)


def _images(request) -> list[bytes]:
    return [base64.b64decode(part["image_url"]["url"].split(",", 1)[1])
            for message in request.json["messages"] if isinstance(message["content"], list)
            for part in message["content"] if part.get("type") == "image_url"]


async def test_a_valid_reply_is_recorded_with_both_screenshots_and_the_task_sent(folder):
    with ScriptedOpenAIServer([reply_text(json.dumps(VALID), prompt_tokens=900, completion_tokens=30)]) as server:
        detection = await ModelDetector(_client(server)).detect(TUPLE, folder, trajectory_id="t/save", task="Save it.")
    [request] = server.distinct_requests()
    assert _images(request) == [_png("white"), _png("navy")]  # before, then after
    text = json.dumps(request.json["messages"])
    assert "click(40,20)" in text and "Save it." in text and all(name in text for name in DEFECT_TYPES)
    assert (detection.defect, detection.type, detection.evidence) == (True, "no-response", VALID["evidence"])
    assert (detection.error, detection.tokens, detection.truth) == (None, 930, "no-response")
    assert (detection.detector, detection.offline, detection.prompt_version) == ("scripted", False, PROMPT_VERSION)


async def test_a_malformed_reply_is_repaired_once(folder):
    bad = json.dumps({"defect": True, "type": "wobbly", "evidence": "?"})
    with ScriptedOpenAIServer([reply_text(bad), reply_text(json.dumps(VALID))]) as server:
        detection = await ModelDetector(_client(server)).detect(TUPLE, folder, trajectory_id="t/save")
    assert len(server.distinct_requests()) == 2
    repair = json.dumps(server.distinct_requests()[1].json["messages"][-1])
    assert "type" in repair and "wobbly" in repair  # the re-ask says what was wrong
    assert (detection.defect, detection.type, detection.error) == (True, "no-response", None)


async def test_a_second_malformed_reply_is_recorded_as_an_error_never_guessed(folder):
    with ScriptedOpenAIServer([reply_text("I think there is a defect."), reply_text('{"defect": "yes"}')]) as server:
        detection = await ModelDetector(_client(server)).detect(TUPLE, folder, trajectory_id="t/save")
    assert len(server.distinct_requests()) == 2  # one repair, no more
    assert detection.defect is None and detection.type is None
    assert "invalid reply after 2 attempt(s)" in detection.error and "defect" in detection.error


async def test_a_failed_model_call_is_recorded_as_an_error(folder):
    with ScriptedOpenAIServer([reply_status(400, message="bad request")]) as server:
        detection = await ModelDetector(_client(server)).detect(TUPLE, folder, trajectory_id="t/save")
    assert detection.defect is None and detection.error.startswith("model call failed")


async def test_a_missing_screenshot_is_an_error_without_a_call(folder):
    (folder / "step_001.png").unlink()
    with ScriptedOpenAIServer([]) as server:
        detection = await ModelDetector(_client(server)).detect(TUPLE, folder, trajectory_id="t/save")
    assert server.requests == [] and detection.error.startswith("nothing to judge")


@pytest.mark.parametrize("reply, problem", [
    ('{"defect": false, "type": "misalignment", "evidence": "x"}', "type: 'misalignment' given with defect false"),
    ('{"defect": true, "type": null}', "evidence"),
    ('{"defect": NaN, "type": null, "evidence": ""}', "not valid JSON"),
    ("no json here", "no JSON object"),
])
def test_parse_detection_names_what_is_wrong(reply, problem):
    with pytest.raises(DetectionError, match=problem.replace("(", r"\(")):
        parse_detection(reply)


def test_a_fenced_reply_parses_and_the_schema_lists_every_type():
    assert parse_detection("Sure:\n```json\n" + json.dumps(VALID) + "\n```")["type"] == "no-response"
    assert DETECTION_SCHEMA["properties"]["type"]["enum"] == [*DEFECT_TYPES, None]


def test_a_model_detector_needs_a_client():
    with pytest.raises(ValueError, match="needs a model client"):
        get_detector("detector")


async def test_the_detector_made_by_name_answers_every_tuple_in_order_shown_no_reference(folder):
    second = TUPLE.model_copy(update={"step": 2, "before": "step_001.png", "after": "step_000.png", "defect": None})
    no_defect = {"defect": False, "type": None, "evidence": "The dialog opened."}
    with ScriptedOpenAIServer([reply_text(json.dumps(VALID)), reply_text(json.dumps(no_defect))]) as server:
        detector = get_detector("detector", _client(server))
        detections = await detector.detect_trajectory(folder, "<p>app</p>", trajectory_id="t/save", transform=None,
                                                      reference_html="<p>REFERENCE</p>", tuples=[TUPLE, second],
                                                      task="Save it.")
    assert [(d.step, d.defect, d.type, d.truth) for d in detections] == [(1, True, "no-response", "no-response"),
                                                                         (2, False, None, None)]
    assert [_images(request) for request in server.requests] == [[_png("white"), _png("navy")],
                                                                 [_png("navy"), _png("white")]]
    assert not any("REFERENCE" in json.dumps(request.json) or "<p>app</p>" in json.dumps(request.json)
                   for request in server.requests)
