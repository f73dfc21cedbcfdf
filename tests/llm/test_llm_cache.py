"""The on-disk call cache: hits, bypass, keys that see images, corruption, atomic writes."""

from __future__ import annotations

import json

from llm import CallCache, ModelClient, call_stats, default_cache_dir, request_key, reset_call_stats, user_message
from llm.testing import ScriptedOpenAIServer, reply_text, scripted_registry


def entries(directory) -> list:
    return sorted(directory.rglob("*.json"))


async def test_second_identical_call_is_served_from_cache(make_client, cache_dir):
    with ScriptedOpenAIServer(default=reply_text("cached answer")) as server:
        client = make_client(server)
        first = await client.chat([user_message("hi")], role="coder")
        second = await client.chat([user_message("hi")], role="coder")
    assert len(server.requests) == 1
    assert not first.cached and second.cached and second.text == "cached answer"
    assert second.usage == first.usage and second.raw == first.raw
    stats = call_stats()
    assert (stats.calls, stats.cache_hits) == (1, 1)
    assert len(entries(cache_dir)) == 1


async def test_a_rerun_with_a_fresh_client_makes_zero_model_calls(make_client, cache_dir):
    with ScriptedOpenAIServer(default=reply_text("x")) as server:
        for text in ("a", "b", "c"):
            await make_client(server).chat([user_message(text)], role="coder")
        reset_call_stats()
        rerun = make_client(server)
        results = [await rerun.chat([user_message(text)], role="coder") for text in ("a", "b", "c")]
    assert all(r.cached for r in results) and len(server.requests) == 3
    assert call_stats().calls == 0 and call_stats().attempts == 0 and call_stats().cache_hits == 3


async def test_cache_false_per_call_bypasses_the_read(make_client):
    with ScriptedOpenAIServer(default=reply_text("fresh")) as server:
        client = make_client(server)
        await client.chat([user_message("hi")], role="coder")
        again = await client.chat([user_message("hi")], role="coder", cache=False)
    assert not again.cached and len(server.requests) == 2


async def test_env_switch_turns_the_cache_off(make_client, cache_dir, monkeypatch):
    monkeypatch.setenv("AUI_LLM_CACHE", "off")
    with ScriptedOpenAIServer(default=reply_text("fresh")) as server:
        client = make_client(server)
        await client.chat([user_message("hi")], role="coder")
        again = await client.chat([user_message("hi")], role="coder")
    assert not again.cached and len(server.requests) == 2
    assert entries(cache_dir) == []


async def test_images_are_part_of_the_key_by_their_hash(make_client, cache_dir, tiny_png):
    red, green = tiny_png(255, 0, 0), tiny_png(0, 255, 0)
    with ScriptedOpenAIServer(default=reply_text("seen")) as server:
        client = make_client(server)
        await client.chat([user_message("look", images=[red])], role="cua")
        same = await client.chat([user_message("look", images=[red])], role="cua")
        other = await client.chat([user_message("look", images=[green])], role="cua")
    assert same.cached and not other.cached and len(server.requests) == 2
    stored = [path.read_text() for path in entries(cache_dir)]
    assert len(stored) == 2
    # entries keep the image hash for people inspecting them, not megabytes of base64
    assert all("base64" not in text and "sha256:" in text for text in stored)


def test_request_key_sees_images_params_and_endpoint_but_not_raw_image_text(tiny_png):
    def material(image: bytes, temperature: float = 0.0, endpoint: str = "http://a/v1") -> dict:
        return {"api": "chat", "endpoint": endpoint,
                "body": {"model": "m", "temperature": temperature,
                         "messages": [user_message("t", images=[image])]}}

    red, blue = tiny_png(255, 0, 0), tiny_png(0, 0, 255)
    base = request_key(material(red))
    assert base == request_key(material(red))
    assert base != request_key(material(blue))
    assert base != request_key(material(red, temperature=0.5))
    assert base != request_key(material(red, endpoint="http://b/v1"))


async def test_api_key_is_not_part_of_the_cache_key(make_client):
    with ScriptedOpenAIServer(default=reply_text("same")) as server:
        await make_client(server, api_key="key-one").chat([user_message("hi")], role="coder")
        again = await make_client(server, api_key="key-two").chat([user_message("hi")], role="coder")
    assert again.cached and len(server.requests) == 1


async def test_different_params_or_api_miss_the_cache(make_client):
    with ScriptedOpenAIServer(default=reply_text("r")) as server:
        client = make_client(server)
        await client.chat([user_message("hi")], role="coder")
        hotter = await client.chat([user_message("hi")], role="coder", temperature=1.0)
        via_responses = await client.responses(role="coder", input="hi")
    assert not hotter.cached and not via_responses.cached and len(server.requests) == 3


async def test_a_corrupt_cache_file_is_a_miss_and_gets_rewritten(make_client, cache_dir):
    with ScriptedOpenAIServer(default=reply_text("good")) as server:
        client = make_client(server)
        await client.chat([user_message("hi")], role="coder")
        [path] = entries(cache_dir)
        path.write_text('{"format": 1, "key": "trunc')
        recovered = await client.chat([user_message("hi")], role="coder")
        assert not recovered.cached and recovered.text == "good"
        assert json.loads(path.read_text())["response"]["choices"][0]["message"]["content"] == "good"
        path.write_text(json.dumps({"format": 1, "key": "wrong-key", "response": {}}))
        assert not (await client.chat([user_message("hi")], role="coder")).cached
    assert len(server.requests) == 3


async def test_failed_calls_are_not_cached(make_client, cache_dir):
    from llm.testing import reply_status

    with ScriptedOpenAIServer([reply_status(400), reply_text("later")]) as server:
        client = make_client(server)
        try:
            await client.chat([user_message("hi")], role="coder")
        except Exception:
            pass
        assert entries(cache_dir) == []
        assert (await client.chat([user_message("hi")], role="coder")).text == "later"


def test_writes_are_atomic_and_leave_no_temp_files(tmp_path):
    cache = CallCache(tmp_path / "c")
    key = request_key({"body": "x"})
    for attempt in range(3):
        cache.put(key, request={"body": "x"}, response={"n": attempt}, latency_s=0.1)
    assert cache.get(key)["response"] == {"n": 2}
    assert [p.name for p in (tmp_path / "c").rglob("*")] == [key[:2], f"{key}.json"]


def test_unwritable_cache_directory_does_not_fail_the_call(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    cache = CallCache(blocker / "sub")
    cache.put("ab" * 32, request={}, response={"ok": True}, latency_s=0)  # logs, does not raise
    assert cache.get("ab" * 32) is None


def test_default_cache_dir_follows_aui_cache_dir(monkeypatch, tmp_path):
    monkeypatch.setenv("AUI_CACHE_DIR", str(tmp_path))
    assert default_cache_dir() == tmp_path / "llm"
    monkeypatch.delenv("AUI_CACHE_DIR")
    assert default_cache_dir().parts[-2:] == (".cache", "llm")


async def test_client_with_default_cache_writes_under_aui_cache_dir(tmp_path):
    with ScriptedOpenAIServer(default=reply_text("d")) as server:
        await ModelClient(scripted_registry(server)).chat([user_message("hi")], role="coder")
    assert len(entries(tmp_path / "aui-cache" / "llm")) == 1
