"""The API key reaches the endpoint and nowhere else: not the cache, logs, errors or the ledger."""

from __future__ import annotations

import logging
import traceback

import pytest

from llm import ModelCallError, ModelClient, ModelConfig, ModelRegistry, user_message
from llm.testing import (
    ScriptedOpenAIServer,
    reply_malformed,
    reply_responses,
    reply_status,
    reply_text,
    scripted_registry,
)

FAKE_KEY = "sk-test-LEAKCHECK-1234"


async def test_the_api_key_never_appears_in_cache_logs_or_errors(
    monkeypatch, caplog, capsys, cache_dir, fast_retry, tiny_png, tmp_path
):
    monkeypatch.setenv("AUI_TEST_API_KEY", FAKE_KEY)
    caplog.set_level(logging.DEBUG)  # openai and httpx debug logs included
    script = [
        reply_text("ok"),
        reply_status(429, retry_after=0), reply_text("ok after 429"),
        reply_status(500), reply_status(500),
        reply_status(401, message="Incorrect API key provided"),
        reply_malformed(), reply_malformed(),
        reply_responses([{"type": "message", "content": [{"type": "output_text", "text": "r"}]}]),
    ]
    errors: list[BaseException] = []
    with ScriptedOpenAIServer(script) as server:
        registry = scripted_registry(server, api_key="${AUI_TEST_API_KEY}", max_retries=1)
        azure = ModelConfig(name="az", provider="azure", model="gpt-5", base_url=server.azure_endpoint,
                            deployment="d", api_version="2025-04-01-preview", api_key="${AUI_TEST_API_KEY}")
        client = ModelClient(registry.with_models(azure), cache=cache_dir, retry=fast_retry)
        await client.chat([user_message("one", images=[tiny_png()])], role="coder")
        await client.chat([user_message("two")], role="coder")
        for text in ("three", "four", "five"):
            try:
                await client.chat([user_message(text)], role="coder")
            except ModelCallError as error:
                errors.append(error)
        await client.responses(role="cua", input="seven")
        server.add(reply_status(403))
        try:
            await client.chat([user_message("eight")], model="az")
        except ModelCallError as error:
            errors.append(error)
    assert len(errors) == 4

    # the key was really used, so its absence elsewhere means something
    assert server.requests[0].headers["authorization"] == f"Bearer {FAKE_KEY}"
    assert server.requests[-1].headers["api-key"] == FAKE_KEY

    files = [path for path in cache_dir.rglob("*") if path.is_file()]
    assert files, "expected cache entries to inspect"
    for path in files:
        assert FAKE_KEY not in path.read_text(encoding="utf-8"), path

    for error in errors:
        rendered = "".join(traceback.format_exception(error))
        assert FAKE_KEY not in rendered
        assert FAKE_KEY not in repr(error)

    ledger_path = client.ledger.dump(tmp_path / "usage.json")
    assert FAKE_KEY not in ledger_path.read_text()
    assert FAKE_KEY not in repr(client.registry) + repr(client.registry.get("coder"))

    logged = caplog.text + "\n".join(str(record.__dict__) for record in caplog.records)
    assert "retrying" in logged  # the retry warnings were captured
    assert FAKE_KEY not in logged
    captured = capsys.readouterr()
    assert FAKE_KEY not in captured.out + captured.err


@pytest.mark.parametrize("provider", ["openai", "azure"])
def test_openai_and_azure_entries_need_an_api_key(provider, cache_dir):
    from llm import ModelConfigError, make_sdk_client

    extra = {"base_url": "http://x", "deployment": "d", "api_version": "v"} if provider == "azure" else {}
    config = ModelConfig(name="k", provider=provider, model="m", **extra)
    with pytest.raises(ModelConfigError, match="'k' field 'api_key'"):
        make_sdk_client(config)


def test_openai_compatible_without_key_never_falls_back_to_openai_api_key(monkeypatch):
    from llm import make_sdk_client

    monkeypatch.setenv("OPENAI_API_KEY", "sk-real-should-not-travel")
    config = ModelConfig(name="v", provider="openai-compatible", model="m", base_url="http://localhost:1/v1")
    assert make_sdk_client(config).api_key == "EMPTY"


def test_registry_repr_is_safe(monkeypatch):
    registry = ModelRegistry([ModelConfig(name="lit", provider="openai", model="m", api_key=FAKE_KEY)])
    assert FAKE_KEY not in repr(registry.get("lit")) and FAKE_KEY not in str(registry.models)


async def test_a_server_echoing_the_key_in_its_error_is_redacted(monkeypatch, caplog, make_client):
    monkeypatch.setenv("AUI_TEST_API_KEY", FAKE_KEY)
    caplog.set_level(logging.WARNING)
    echo = f"Incorrect API key provided: {FAKE_KEY}"
    with ScriptedOpenAIServer([reply_status(500, message=echo), reply_status(401, message=echo)]) as server:
        client = make_client(server, api_key="${AUI_TEST_API_KEY}", cache=False)
        with pytest.raises(ModelCallError) as caught:
            await client.chat([user_message("hi")], role="coder")
    rendered = "".join(traceback.format_exception(caught.value))
    assert "Incorrect API key provided: ***" in rendered
    assert FAKE_KEY not in rendered and FAKE_KEY not in caplog.text
    assert FAKE_KEY not in str(client.ledger.to_dict(include_calls=True))
