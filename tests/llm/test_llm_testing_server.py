"""The scripted server other packages' tests rely on, and the process-wide client accessor."""

from __future__ import annotations

import pytest

from llm import ModelCallError, get_client, hash_inline_images, image_data_url, user_message
from llm.testing import RecordedRequest, ScriptedOpenAIServer, reply_status, reply_text, scripted_model


async def test_a_callable_script_sees_the_parsed_request(make_client, tiny_png):
    def answer(request: RecordedRequest):
        return reply_text(f"{request.kind}:{request.count_images()} images")

    with ScriptedOpenAIServer(answer) as server:
        client = make_client(server, cache=False)
        chat = await client.chat([user_message("look", images=[tiny_png(), tiny_png(1, 2, 3)])], role="cua")
        responses = await client.responses(role="cua", input=[{"role": "user", "content": [
            {"type": "input_image", "image_url": image_data_url(tiny_png())}]}])
    assert chat.text == "chat:2 images"
    assert responses.output_text == "responses:1 images"


async def test_per_kind_scripts_and_exhaustion_is_reported(make_client):
    script = {"chat": [reply_text("for chat")], "responses": [reply_text("for responses")]}
    with ScriptedOpenAIServer(script) as server:
        client = make_client(server, cache=False, max_retries=0)
        assert (await client.responses(role="cua", input="x")).output_text == "for responses"
        assert (await client.chat([user_message("x")], role="cua")).text == "for chat"
        with pytest.raises(ModelCallError, match="script exhausted"):
            await client.chat([user_message("x")], role="cua")
        server.add(reply_status(418), kind="chat")
        with pytest.raises(ModelCallError, match="HTTP 418"):
            await client.chat([user_message("x")], role="cua")
    assert [r.kind for r in server.requests] == ["responses", "chat", "chat", "chat"]


async def test_a_call_the_client_retried_is_one_distinct_request(make_client):
    # the first attempt fails (a 503 here; a time-out on a loaded machine alike) and the client sends the same body again
    with ScriptedOpenAIServer([reply_status(503), reply_text("ok"), reply_text("next")]) as server:
        client = make_client(server, cache=False, max_retries=1)
        await client.chat([user_message("hi")], role="coder")
        await client.chat([user_message("again")], role="coder")
    assert len(server.requests) == 3  # every HTTP request, the retry too
    assert [r.json["messages"][0]["content"] for r in server.distinct_requests()] == ["hi", "again"]
    assert server.distinct_requests("responses") == []
    assert scripted_model(server).timeout_s >= 60  # what a loaded machine meets: no retry for a late reader


def test_hash_inline_images_replaces_data_urls_everywhere(tiny_png):
    request = {"input": [{"type": "input_image", "image_url": image_data_url(tiny_png())}],
               "messages": [user_message("t", images=[tiny_png()])]}
    hashed = hash_inline_images(request)
    assert hashed["input"][0]["image_url"].startswith("sha256:")
    assert hashed["input"][0]["image_url"] == hashed["messages"][0]["content"][1]["image_url"]["url"]
    assert hashed["messages"][0]["content"][0] == {"type": "text", "text": "t"}


def test_user_message_validates_its_input():
    with pytest.raises(ValueError, match="neither PNG nor JPEG"):
        user_message("x", images=[b"GIF89a..."])
    with pytest.raises(ValueError, match="needs text or images"):
        user_message()
    assert user_message("plain") == {"role": "user", "content": "plain"}


def test_get_client_is_one_client_per_config_and_role_overrides(tmp_path):
    path = tmp_path / "models.yaml"
    path.write_text("roles: {coder: a}\nmodels:\n  - {name: a, provider: offline}\n  - {name: b, provider: offline}\n")
    first = get_client(path)
    assert get_client(path) is first
    overridden = get_client(path, {"coder": "b"})
    assert overridden is not first and overridden.registry.model_name("coder") == "b"
    assert first.registry.model_name("coder") == "a"


def test_shared_clients_lists_what_get_client_made(tmp_path):
    from llm import shared_clients

    path = tmp_path / "models.yaml"
    path.write_text("models:\n  - {name: a, provider: offline}\n")
    client = get_client(path, cache_dir=tmp_path / "c")
    assert any(c is client for c in shared_clients())


def test_shared_clients_of_one_registry_leave_out_other_runs_clients(tmp_path):
    from llm import shared_clients

    mine, theirs = tmp_path / "mine.yaml", tmp_path / "theirs.yaml"
    for path in (mine, theirs):
        path.write_text("models:\n  - {name: a, provider: offline}\n")
    own = [get_client(mine), get_client(mine, {"coder": "a"})]
    other = get_client(theirs)
    listed = shared_clients(mine)
    assert len(listed) == 2 and all(any(c is o for o in own) for c in listed)
    assert not any(c is other for c in listed)
    assert any(c is other for c in shared_clients())
