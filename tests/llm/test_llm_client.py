"""The async client against a real HTTP server through the real openai SDK: replies, retries, errors."""

from __future__ import annotations

import asyncio
import logging
import time

import pytest

from llm import (
    ModelCallError,
    ModelClient,
    ModelConfig,
    OfflineModelError,
    call_stats,
    system_message,
    user_message,
)
from llm.testing import (
    ScriptedOpenAIServer,
    reply_hang,
    reply_malformed,
    reply_reset,
    reply_responses,
    reply_status,
    reply_text,
)


async def test_chat_returns_text_usage_and_sends_configured_params(make_client):
    with ScriptedOpenAIServer([reply_text("Hello!", finish_reason="stop")]) as server:
        client = make_client(server, cache=False, params={"temperature": 0.3, "seed": 7, "top_k": 5})
        result = await client.chat([system_message("be brief"), user_message("hi")], role="coder", seed=None, top_p=0.9)
    assert (result.text, result.finish_reason, result.cached, result.retries) == ("Hello!", "stop", False, 0)
    assert (result.model, result.role) == ("scripted", "coder")
    assert (result.usage.prompt_tokens, result.usage.completion_tokens) == (11, 7)
    assert result.raw["choices"][0]["message"]["content"] == "Hello!"
    body = server.requests[0].json
    assert body["model"] == "scripted-model"
    assert body["messages"] == [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}]
    # configured params are sent, per-call ones override, None removes one
    assert (body["temperature"], body["top_k"], body["top_p"]) == (0.3, 5, 0.9) and "seed" not in body
    assert call_stats().calls == 1 and call_stats().retries == 0


def retry_waits(caplog) -> list[str]:
    """The waits before a retry the client chose, as it logged them ("... retrying in 0.40s")."""
    return [r.getMessage().rsplit("retrying in ", 1)[1] for r in caplog.records if "retrying in " in r.getMessage()]


async def test_429_is_retried_after_the_servers_retry_after_and_counted(make_client, caplog):
    caplog.set_level(logging.WARNING, logger="llm")
    with ScriptedOpenAIServer([reply_status(429, retry_after=0.4), reply_text("ok")]) as server:
        client = make_client(server, cache=False)
        started = time.monotonic()
        result = await client.chat([user_message("hi")], role="coder")
        elapsed = time.monotonic() - started
    assert result.text == "ok" and result.retries == 1
    # The wait chosen is the server's Retry-After, not FAST_RETRY's own 0.01-0.05 s back-off: what the client
    # decided, read from its log rather than from a clock a loaded machine runs slow. That it then did wait:
    # a lower bound, which load can only make easier to meet, never make fail.
    assert retry_waits(caplog) == ["0.40s"]
    assert elapsed >= 0.4
    assert len(server.requests) == 2
    stats = call_stats()
    assert (stats.calls, stats.attempts, stats.retries, stats.failures) == (1, 2, 1, 0)


async def test_retry_after_is_capped(make_client, fast_retry, caplog):
    caplog.set_level(logging.WARNING, logger="llm")
    with ScriptedOpenAIServer([reply_status(503, retry_after=3600), reply_text("ok")]) as server:
        client = make_client(server, cache=False)
        # 60 s only stops a client that waits the hour from holding the suite; the cap is read from the log
        result = await asyncio.wait_for(client.chat([user_message("hi")], role="coder"), 60)
    assert result.text == "ok" and len(server.requests) == 2
    assert fast_retry.retry_after_cap_s == 0.5 and retry_waits(caplog) == ["0.50s"]


async def test_persistent_500_exhausts_bounded_retries_with_a_clear_error(make_client):
    with ScriptedOpenAIServer(default=reply_status(500, message="engine overloaded")) as server:
        client = make_client(server, cache=False, max_retries=2)
        with pytest.raises(ModelCallError) as caught:
            await client.chat([user_message("hi")], role="coder")
    error = caught.value
    assert len(server.requests) == 3 and error.attempts == 3 and error.status == 500 and error.retryable
    message = str(error)
    assert "'scripted'" in message and server.base_url in message
    assert "HTTP 500" in message and "engine overloaded" in message and "retries exhausted" in message
    stats = call_stats()
    assert (stats.calls, stats.attempts, stats.retries, stats.failures) == (1, 3, 2, 1)


async def test_sdk_retries_are_off_so_zero_retries_means_one_request(make_client):
    with ScriptedOpenAIServer(default=reply_status(500)) as server:
        client = make_client(server, cache=False, max_retries=0)
        with pytest.raises(ModelCallError):
            await client.chat([user_message("hi")], role="coder")
    assert len(server.requests) == 1


@pytest.mark.parametrize("status", [400, 401, 404])
async def test_non_retryable_status_raises_at_once(make_client, status):
    with ScriptedOpenAIServer([reply_status(status, message="bad thing"), reply_text("never")]) as server:
        client = make_client(server, cache=False, max_retries=3)
        with pytest.raises(ModelCallError, match=f"HTTP {status}: bad thing.*not retryable") as caught:
            await client.chat([user_message("hi")], role="coder")
    assert len(server.requests) == 1 and caught.value.status == status and not caught.value.retryable


async def test_a_hang_past_the_timeout_is_retried_then_fails_within_bounded_time(make_client):
    with ScriptedOpenAIServer(default=reply_hang(30)) as server:
        client = make_client(server, cache=False, timeout_s=0.3, max_retries=1)
        started = time.monotonic()
        with pytest.raises(ModelCallError, match="timed out after 2 attempt") as caught:
            await client.chat([user_message("hi")], role="coder")
        elapsed = time.monotonic() - started
    assert caught.value.attempts == 2 and call_stats().attempts == 2
    # Each of the two attempts ran its 0.3 s (load only makes that longer), and the client gave up before the
    # server's 30 s hang could have answered either: its own limit ended them. The bound is the hang, the one
    # other way the call could end, not a guess at how fast a machine is.
    assert 0.6 <= elapsed < 30
    assert 1 <= len(server.requests) <= 2  # the second may not have reached the server within its 0.3 s


async def test_per_call_timeout_overrides_the_configured_one(make_client):
    # the configured 0.2 s would time out on a 0.6 s answer; the per-call 10 s lets it through
    with ScriptedOpenAIServer([reply_hang(0.6, then=reply_text("slow but fine"))]) as server:
        client = make_client(server, cache=False, timeout_s=0.2, max_retries=0)
        result = await client.chat([user_message("hi")], role="coder", timeout_s=10)
    assert result.text == "slow but fine" and result.retries == 0 and len(server.requests) == 1


async def test_malformed_json_is_retried_and_a_persistent_one_is_a_clear_error(make_client):
    with ScriptedOpenAIServer([reply_malformed(), reply_text("fine")]) as server:
        result = await make_client(server, cache=False).chat([user_message("hi")], role="coder")
    assert result.text == "fine" and result.retries == 1

    with ScriptedOpenAIServer(default=reply_malformed()) as server:
        with pytest.raises(ModelCallError, match="malformed response"):
            await make_client(server, cache=False, max_retries=1).chat([user_message("hi")], role="coder")


async def test_connection_reset_is_retried(make_client):
    with ScriptedOpenAIServer([reply_reset(), reply_text("after reset")]) as server:
        result = await make_client(server, cache=False).chat([user_message("hi")], role="coder")
    assert result.text == "after reset" and result.retries == 1 and len(server.requests) == 2


async def test_unreachable_endpoint_is_a_connection_error_naming_the_endpoint(make_client):
    with ScriptedOpenAIServer() as server:
        client = make_client(server, cache=False, max_retries=1)
    # the server is closed now, so the port refuses connections
    with pytest.raises(ModelCallError, match=r"connection error.*2 attempt") as caught:
        await client.chat([user_message("hi")], role="coder")
    assert server.base_url.split("/v1")[0] in caught.value.endpoint


async def test_images_become_base64_png_content_parts(make_client, tiny_png, decode_data_url):
    red, blue = tiny_png(255, 0, 0), tiny_png(0, 0, 255)
    message = user_message("what is on screen?", images=[red, blue])
    with ScriptedOpenAIServer([reply_text("two squares")]) as server:
        await make_client(server, cache=False).chat([message], role="cua")
    request = server.requests[0]
    assert request.count_images() == 2
    parts = request.json["messages"][0]["content"]
    assert parts[0] == {"type": "text", "text": "what is on screen?"}
    assert parts[1]["image_url"]["url"].startswith("data:image/png;base64,")
    assert decode_data_url(parts[2]["image_url"]["url"]) == blue


async def test_responses_api_returns_output_items_and_translates_params(make_client):
    computer_call = {"type": "computer_call", "call_id": "call_1", "action": {"type": "click", "x": 10, "y": 20},
                     "pending_safety_checks": [], "status": "completed"}
    script = {"responses": [reply_responses([computer_call], response_id="resp_1"), reply_text("done")]}
    with ScriptedOpenAIServer(script) as server:
        client = make_client(server, cache=False, params={"max_tokens": 256, "reasoning_effort": "low"})
        first = await client.responses(role="cua", input=[{"role": "user", "content": "click"}], truncation="auto")
        second = await client.responses(role="cua", previous_response_id=first.id, input=[])
    assert first.id == "resp_1" and first.items("computer_call") == [computer_call]
    assert first.usage.prompt_tokens == 11 and not first.cached
    assert second.output_text == "done"
    body = server.requests_for("responses")[0].json
    assert body["max_output_tokens"] == 256 and body["reasoning"] == {"effort": "low"}
    assert body["truncation"] == "auto" and "max_tokens" not in body
    assert server.requests[1].json["previous_response_id"] == "resp_1"


async def test_azure_deployment_paths_and_header(fast_retry):
    with ScriptedOpenAIServer([reply_text("from azure")]) as server:
        from llm import ModelRegistry

        azure = ModelConfig(name="az", provider="azure", model="gpt-5", base_url=server.azure_endpoint,
                            deployment="my-gpt5", api_version="2025-04-01-preview", api_key="azure-key-xyz")
        client = ModelClient(ModelRegistry([azure], {"coder": "az"}), cache=False, retry=fast_retry)
        result = await client.chat([user_message("hi")], role="coder")
    request = server.requests[0]
    assert result.text == "from azure"
    assert request.path == "/openai/deployments/my-gpt5/chat/completions?api-version=2025-04-01-preview"
    assert request.headers["api-key"] == "azure-key-xyz"


async def test_offline_model_raises_without_contacting_anything(make_client):
    with ScriptedOpenAIServer() as server:
        client = make_client(server)
        assert client.registry.is_offline("offline")
        with pytest.raises(OfflineModelError, match="is_offline"):
            await client.chat([user_message("hi")], model="offline")
    assert server.requests == []


async def test_concurrent_calls_share_one_client(make_client):
    with ScriptedOpenAIServer(default=reply_text("ok")) as server:
        client = make_client(server, cache=False)
        results = await asyncio.gather(*(client.chat([user_message(f"q{i}")], role="cua") for i in range(8)))
        await client.aclose()
    assert [r.text for r in results] == ["ok"] * 8 and len(server.requests) == 8


def test_chat_sync_works_outside_an_event_loop(make_client):
    with ScriptedOpenAIServer([reply_text("one"), reply_text("two")]) as server:
        client = make_client(server, cache=False)
        assert client.chat_sync([user_message("a")], role="coder").text == "one"
        assert client.chat_sync([user_message("b")], role="coder").text == "two"


async def test_chat_sync_refuses_to_run_inside_an_event_loop(make_client):
    with ScriptedOpenAIServer() as server:
        with pytest.raises(RuntimeError, match="await chat"):
            make_client(server).chat_sync([user_message("a")], role="coder")


async def test_exactly_one_of_role_or_model(make_client):
    with ScriptedOpenAIServer() as server:
        client = make_client(server)
        with pytest.raises(ValueError, match="exactly one"):
            await client.chat([user_message("a")])
        with pytest.raises(ValueError, match="stream"):
            await client.chat([user_message("a")], role="coder", stream=True)
