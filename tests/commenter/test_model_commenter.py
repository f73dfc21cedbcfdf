"""The VLM commenter through the real `openai` client against a local scripted server."""

from __future__ import annotations

import base64
import io
import json

import pytest
from PIL import Image

from commenter import (
    COMMENT_SCHEMA,
    CommentValidationError,
    Feedback,
    TaskComment,
    comment_app,
    get_commenter,
    merge_comments,
    parse_reply,
    validate_comment,
)
from llm import ModelClient, UnknownNameError
from llm.testing import ScriptedOpenAIServer, reply_text, scripted_registry

VALID = {
    "issues": ["The Save button is below the fold", "Clicking 'Does nothing' had no effect"],
    "actionable_changes": [
        "Move `#save` into the 1280×720 viewport — interaction robustness.",
        "Add a number input beside `#level` so the value can be typed — input permissiveness.",
        "Make `#noop` update `#count` at once — state visibility.",
    ],
    "fit_within_screen": True,
    "avoid_regressions": True,
}


def _client(server: ScriptedOpenAIServer) -> ModelClient:
    return ModelClient(scripted_registry(server), cache=False)


def _images(request) -> list[Image.Image]:
    content = request.json["messages"][-1]["content"]
    urls = [part["image_url"]["url"] for part in content if isinstance(part, dict) and part.get("type") == "image_url"]
    return [Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1]))) for url in urls]


def _user_text(request) -> str:
    content = request.json["messages"][-1]["content"]
    return content if isinstance(content, str) else " ".join(p.get("text", "") for p in content if p.get("type") == "text")


async def test_commenter_reply_is_validated_json_through_the_real_openai_client(synthetic):
    with ScriptedOpenAIServer([reply_text("```json\n" + json.dumps(VALID) + "\n```")]) as server:
        result = await get_commenter("commenter", client=_client(server)).comment(synthetic(4))
    assert result.error is None and result.attempts == 1
    assert result.comment.actionable_changes == VALID["actionable_changes"]
    assert result.comment.fit_within_screen is True
    assert not result.offline and result.commenter == "model" and result.mode == "dashboard"
    request = server.distinct_requests()[0]
    assert request.path.endswith("/chat/completions") and request.json["model"] == "scripted-model"
    assert "Press the buttons" in _user_text(request)  # the task text goes with the images


async def test_malformed_reply_is_repaired_once_with_the_errors_and_no_images(synthetic):
    script = [reply_text("Here is my review: {issues: [unquoted"), reply_text(json.dumps(VALID))]
    with ScriptedOpenAIServer(script) as server:
        result = await get_commenter("commenter", client=_client(server)).comment(synthetic(4))
    assert result.comment is not None and result.attempts == 2 and result.error is None
    assert len(server.distinct_requests()) == 2
    repair = server.distinct_requests()[1]
    assert repair.count_images() == 0
    assert "not valid JSON" in _user_text(repair)
    assert repair.json["messages"][-2] == {"role": "assistant", "content": "Here is my review: {issues: [unquoted"}


async def test_schema_violation_is_repaired_naming_the_violated_field(synthetic):
    too_few = dict(VALID, actionable_changes=VALID["actionable_changes"][:2])
    with ScriptedOpenAIServer([reply_text(json.dumps(too_few)), reply_text(json.dumps(VALID))]) as server:
        result = await get_commenter("commenter", client=_client(server)).comment(synthetic(4))
    assert result.attempts == 2 and result.comment is not None
    assert "actionable_changes" in _user_text(server.distinct_requests()[1])


async def test_reply_still_invalid_after_the_repair_is_recorded_not_raised(synthetic):
    with ScriptedOpenAIServer([reply_text("no json"), reply_text("still none")]) as server:
        result = await get_commenter("commenter", client=_client(server), max_repairs=1).comment(synthetic(4))
    assert result.comment is None and "invalid reply" in result.error
    assert len(server.distinct_requests()) == 2 and result.raw_replies == ["no json", "still none"]


@pytest.mark.parametrize("mode, expected_images", [("dashboard", 2), ("text-only", 1), ("screenshots-only", 1 + 7)])
async def test_ablation_modes_send_what_they_claim(synthetic, mode, expected_images):
    with ScriptedOpenAIServer([reply_text(json.dumps(VALID))]) as server:
        result = await get_commenter("commenter", client=_client(server), mode=mode).comment(synthetic(7))
    request = server.distinct_requests()[0]
    assert result.mode == mode
    assert request.count_images() == expected_images
    sizes = [image.size for image in _images(request)]
    text = _user_text(request)
    if mode == "dashboard":
        assert sizes == [(1280, 720), (1920, 1080)]
    else:
        assert (1920, 1080) not in sizes
    if mode == "text-only":
        assert "#1 drag(" in text and "#7 wait()" in text and "thought:" in text
    else:
        assert "#1 drag(" not in text


def test_unknown_mode_is_refused_with_the_known_modes():
    with ScriptedOpenAIServer([]) as server:
        with pytest.raises(UnknownNameError, match="text-only"):
            get_commenter("commenter", client=_client(server), mode="video")


def test_schema_and_validator_enforce_the_contract():
    assert set(COMMENT_SCHEMA["required"]) == {"issues", "actionable_changes", "fit_within_screen", "avoid_regressions"}
    validate_comment(VALID)
    bad_cases = [
        dict(VALID, issues=["a1", "b22", "c33", "d44"]),  # more than 3 issues
        dict(VALID, extra=1),  # unknown key
        dict(VALID, actionable_changes=VALID["actionable_changes"] + ["x — state visibility #a"] * 4),  # 7 changes
        dict(VALID, actionable_changes=["Make it nicer, please", *VALID["actionable_changes"][1:]]),  # no principle
        dict(VALID, actionable_changes=["Make the big button work — state visibility", *VALID["actionable_changes"][1:]]),  # no selector
        dict(VALID, fit_within_screen="yes"),
    ]
    for case in bad_cases:
        with pytest.raises(CommentValidationError):
            validate_comment(case)
    with pytest.raises(CommentValidationError, match="no JSON object"):
        parse_reply("I cannot help with that.")


def _task_comment(task_id: str, changes: list[str], issues: list[str], fit: bool = False) -> TaskComment:
    comment = validate_comment({"issues": issues, "actionable_changes": changes, "fit_within_screen": fit, "avoid_regressions": False})
    return TaskComment(app_id="app", task_id=task_id, commenter="model", comment=comment)


def test_merge_deduplicates_ranks_by_task_count_and_caps():
    common = "Move `#save` into the viewport — interaction robustness."
    reworded = "Bring `#save` inside the 1280×720 screen so it can be clicked — interaction robustness."
    comments = [
        _task_comment("t1", [common, "Add a number input beside `#level` — input permissiveness.", f"Give `#b{1}` an id — interaction robustness."], ["Save is hidden"], fit=True),
        _task_comment("t2", [reworded, "Make `#noop` change the DOM — state visibility.", "Give `#c2` an id — interaction robustness."], ["Save is hidden"]),
        _task_comment("t3", [common, "Make `#noop` change the DOM — state visibility.", "Give `#d3` an id — interaction robustness."], ["save is hidden!"]),
        TaskComment(app_id="app", task_id="t4", commenter="model", error="invalid reply: no JSON"),
    ]
    feedback = merge_comments("app", comments, max_changes=4)
    assert isinstance(feedback, Feedback)
    assert feedback.actionable_changes[0] == common  # raised by 3 tasks (same element + principle)
    assert feedback.actionable_changes[1] == "Make `#noop` change the DOM — state visibility."
    assert len(feedback.actionable_changes) == 4 and feedback.dropped > 0
    assert feedback.issues == ["Save is hidden"]
    assert feedback.fit_within_screen is True and feedback.avoid_regressions is False
    assert [s.valid for s in feedback.sources] == [True, True, True, False]
    assert "1. Move `#save`" in feedback.render()


async def test_comment_app_comments_on_failed_rollouts_only(synthetic):
    with ScriptedOpenAIServer([], default=reply_text(json.dumps(VALID))) as server:
        commenter = get_commenter("commenter", client=_client(server))
        feedback = await comment_app("fake-app", [synthetic(4), synthetic(2, True), synthetic(7)], commenter)
    assert len(server.distinct_requests()) == 2
    assert [s.task_id for s in feedback.sources] == ["steps-4", "steps-7"]
    assert feedback.actionable_changes == VALID["actionable_changes"]  # identical comments merged


def test_offline_model_name_gives_the_offline_commenter():
    with ScriptedOpenAIServer([]) as server:
        assert get_commenter("offline", client=_client(server)).offline
        assert get_commenter("offline").offline
        assert not get_commenter("scripted", client=_client(server)).offline


async def test_a_trajectory_without_screenshots_is_a_recorded_error_not_a_crash(synthetic, tmp_path):
    import shutil

    folder = tmp_path / "cut-short"
    shutil.copytree(synthetic(2), folder)
    for png in folder.glob("*.png"):
        png.unlink()  # as a rollout stopped before its first screenshot leaves it
    with ScriptedOpenAIServer([reply_text(json.dumps(VALID))]) as server:
        result = await get_commenter("commenter", client=_client(server)).comment(folder)
        assert not server.requests, "no model call for a trajectory there is nothing to show of"
    assert result.comment is None and "nothing to comment on" in result.error
