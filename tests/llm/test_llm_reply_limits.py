"""Reply size caps, through the real client against a real HTTP server: a reply over its role's
cap is refused (named, recorded, never cached or retried), reading stops early, and a role
(`reply_caps:` in the YAML), the model entry (YAML) or the call can change the cap."""

from __future__ import annotations

import gzip
import json
import pickle
import textwrap
import time

import pytest

from llm import (
    DEFAULT_MAX_REPLY_BYTES,
    DEFAULT_REPLY_CAPS,
    ROLES,
    ModelCallError,
    ModelClient,
    ModelConfig,
    ModelConfigError,
    ReplyTooLargeError,
    call_stats,
    load_model_registry,
    reply_cap,
    user_message,
)
from llm.testing import Reply, ScriptedOpenAIServer, reply_flood, reply_text

FIVE_MB = 5 * 1000 * 1000


def test_default_caps_cover_every_role_and_give_the_coder_the_most():
    assert set(DEFAULT_REPLY_CAPS) == set(ROLES)
    assert DEFAULT_REPLY_CAPS["coder"] == max(DEFAULT_REPLY_CAPS.values()) == DEFAULT_MAX_REPLY_BYTES
    assert DEFAULT_REPLY_CAPS["cua"] == min(DEFAULT_REPLY_CAPS.values())


async def test_a_5_mb_reply_over_the_roles_cap_is_refused_named_recorded_and_not_cached(make_client, cache_dir):
    with ScriptedOpenAIServer(default=reply_text("x" * FIVE_MB)) as server:
        client = make_client(server, cache=True, max_retries=2)
        with pytest.raises(ReplyTooLargeError) as caught:
            await client.chat([user_message("what next?")], role="cua")
        error = caught.value
        # Not cached: the same call reaches the server again (and is refused again).
        with pytest.raises(ReplyTooLargeError):
            await client.chat([user_message("what next?")], role="cua")
        requests = len(server.requests)
    message = str(error)
    cap = DEFAULT_REPLY_CAPS["cua"]
    assert "role 'cua'" in message and "model 'scripted'" in message
    assert f"{cap:,} bytes" in message and "default for role 'cua'" in message
    size = error.size_bytes
    assert error.size_exact and FIVE_MB < size < FIVE_MB + 1000  # the declared Content-Length, read before the body
    assert f"{size:,} bytes" in message and "max_reply_bytes" in message
    assert isinstance(error, ModelCallError) and not error.retryable and error.attempts == 1 and error.status == 200
    assert (error.role, error.cap_bytes) == ("cua", cap)
    assert requests == 2  # one attempt per call, although the model allows two retries
    assert not any(cache_dir.rglob("*.json"))
    usage = client.ledger.by_role()["cua"]
    assert (usage.calls, usage.failed_calls, usage.prompt_tokens) == (0, 2, 0)
    record = client.ledger.records[0]
    assert record.error is not None and f"{size:,} bytes" in record.error and f"{cap:,}" in record.error
    stats = call_stats()
    assert (stats.calls, stats.attempts, stats.retries, stats.failures) == (2, 2, 0, 2)


async def test_a_reply_under_the_cap_passes_and_is_cached(make_client):
    text = "x" * (DEFAULT_REPLY_CAPS["cua"] - 1000)
    with ScriptedOpenAIServer([reply_text(text)]) as server:
        client = make_client(server, cache=True)
        first = await client.chat([user_message("what next?")], role="cua")
        again = await client.chat([user_message("what next?")], role="cua")
    assert first.text == text and again.text == text and again.cached
    assert len(server.requests) == 1


async def test_each_role_has_its_own_cap_and_a_model_name_gets_the_largest_of_the_roles_it_plays(make_client):
    # 100 KB: over the CUA's cap, under the coder's. Every role of the scripted registry is on `scripted`.
    with ScriptedOpenAIServer(default=reply_text("x" * 100_000)) as server:
        client = make_client(server, cache=False)
        with pytest.raises(ReplyTooLargeError, match="role 'cua'"):
            await client.chat([user_message("a")], role="cua")
        assert len((await client.chat([user_message("b")], role="coder")).text) == 100_000
        assert len((await client.chat([user_message("c")], model="scripted")).text) == 100_000


async def test_reading_stops_at_the_cap_when_the_body_has_no_length(make_client):
    # The body keeps coming for 30 s; the attempt's limit is 20 s. Only stopping early answers at once.
    with ScriptedOpenAIServer(default=reply_flood(30)) as server:
        client = make_client(server, cache=False, timeout_s=20, max_retries=0)
        started = time.monotonic()
        with pytest.raises(ReplyTooLargeError, match="reading stopped") as caught:
            await client.chat([user_message("hi")], role="cua")
        elapsed = time.monotonic() - started
    cap = DEFAULT_REPLY_CAPS["cua"]
    # Stopped at the cap, not at the attempt's 20 s limit nor at the end of the 30 s body: the two other ways
    # this call could end, so the bound holds on any machine that reads a few MB in 20 s and fails for either.
    assert elapsed < 20
    assert not caught.value.size_exact and cap < caught.value.size_bytes <= cap + 256 * 1024


async def test_a_small_gzip_body_that_inflates_past_the_cap_is_refused(make_client):
    body = {"choices": [{"index": 0, "message": {"role": "assistant", "content": "x" * FIVE_MB}}]}
    packed = gzip.compress(json.dumps(body).encode())
    assert len(packed) < DEFAULT_REPLY_CAPS["cua"]  # the declared length alone would let it through
    bomb = Reply(action="raw", body=packed, headers={"Content-Encoding": "gzip"})
    with ScriptedOpenAIServer([bomb]) as server:
        with pytest.raises(ReplyTooLargeError, match="reading stopped") as caught:
            await make_client(server, cache=False).chat([user_message("hi")], role="cua")
    assert caught.value.size_bytes < FIVE_MB


def _yaml_registry(tmp_path, server, extra: str):
    path = tmp_path / "models.yaml"
    path.write_text(textwrap.dedent(f"""\
        roles: {{coder: local, cua: local}}
        models:
          - name: local
            provider: openai-compatible
            model: scripted-model
            base_url: {server.base_url}
            max_retries: 0
        """) + extra, encoding="utf-8")
    return load_model_registry(path)


async def test_max_reply_bytes_in_the_yaml_changes_the_cap_for_every_role_of_that_model(tmp_path, fast_retry):
    with ScriptedOpenAIServer(default=reply_text("x" * 5000)) as server:
        plain = ModelClient(_yaml_registry(tmp_path, server, ""), cache=False, retry=fast_retry)
        assert len((await plain.chat([user_message("a")], role="coder")).text) == 5000

        capped = _yaml_registry(tmp_path, server, "    max_reply_bytes: 4096\n")
        assert capped.get("local").max_reply_bytes == 4096
        client = ModelClient(capped, cache=False, retry=fast_retry)
        with pytest.raises(ReplyTooLargeError) as caught:
            await client.chat([user_message("a")], role="coder")
    assert caught.value.cap_bytes == 4096
    message = str(caught.value)
    assert "max_reply_bytes of model 'local'" in message and str(tmp_path / "models.yaml") in message


def test_a_cap_in_the_yaml_must_be_a_positive_number_of_bytes(tmp_path):
    with ScriptedOpenAIServer() as server:
        with pytest.raises(ModelConfigError, match=r"local.*max_reply_bytes"):
            _yaml_registry(tmp_path, server, "    max_reply_bytes: 0\n")


async def test_reply_caps_in_the_yaml_change_the_cap_of_that_role_only(tmp_path, fast_retry):
    with ScriptedOpenAIServer(default=reply_text("x" * 5000)) as server:
        registry = _yaml_registry(tmp_path, server, "reply_caps:\n  cua: 4096\n  coder: 2_097_152\n")
        assert registry.reply_caps == {"cua": 4096, "coder": 2 * 1024 * 1024}
        assert registry.with_roles({"proposer": "local"}).reply_caps == registry.reply_caps
        client = ModelClient(registry, cache=False, retry=fast_retry)
        assert len((await client.chat([user_message("a")], role="coder")).text) == 5000
        with pytest.raises(ReplyTooLargeError) as caught:
            await client.chat([user_message("a")], role="cua")
    assert (caught.value.role, caught.value.cap_bytes) == ("cua", 4096)
    message = str(caught.value)
    assert "reply_caps.cua of the model registry" in message and "set reply_caps: for the role" in message


LOCAL = ModelConfig(name="local", provider="openai-compatible", model="m", base_url="http://127.0.0.1:9/v1")
CAPPED = LOCAL.model_copy(update={"max_reply_bytes": 5000})
ROLE_MAP = {"coder": "local", "cua": "local", "commenter": "local", "commenter:dashboard": "local"}


@pytest.mark.parametrize(("config", "label", "override", "caps", "expected"), [
    # call > model > role (reply_caps) > the role's default
    (CAPPED, "cua", 700, {"cua": 900}, (700, "max_reply_bytes= of this call")),
    (CAPPED, "cua", None, {"cua": 900}, (5000, "max_reply_bytes of model 'local'")),
    (LOCAL, "cua", None, {"cua": 900}, (900, "reply_caps.cua of the model registry")),
    (LOCAL, "cua", None, {"coder": 900}, (64 * 1024, "default for role 'cua'")),
    # a commenter mode is capped as the commenter, unless it has an entry of its own
    (LOCAL, "commenter:dashboard", None, {}, (256 * 1024, "default for role 'commenter'")),
    (LOCAL, "commenter:dashboard", None, {"commenter": 800}, (800, "reply_caps.commenter of the model registry")),
    (LOCAL, "commenter:dashboard", None, {"commenter": 800, "commenter:dashboard": 600},
     (600, "reply_caps.commenter:dashboard of the model registry")),
    # by model name: the largest cap of the roles the model plays, set or default
    (LOCAL, "local", None, {"coder": 1000, "commenter": 2000}, (64 * 1024, "largest cap of the roles model 'local' plays")),
    (LOCAL, "local", None, {"cua": 3 * 1024 * 1024}, (3 * 1024 * 1024, "largest cap of the roles model 'local' plays")),
])
def test_which_cap_applies_call_then_model_then_role_then_default(config, label, override, caps, expected):
    assert reply_cap(config, label, ROLE_MAP, override, caps) == expected


@pytest.mark.parametrize(("caps", "problem"), [
    ("cua: 0", r"field 'reply_caps.cua': must be a positive whole number of bytes .*got 0"),
    ("cua: -4096", r"field 'reply_caps.cua': must be a positive whole number of bytes .*got -4096"),
    ("cua: 4096.5", r"field 'reply_caps.cua': must be a positive whole number of bytes .*got 4096.5"),
    ("cua: 64KiB", r"field 'reply_caps.cua': must be a positive whole number of bytes .*got '64KiB'"),
    ("cua: true", r"field 'reply_caps.cua': must be a positive whole number of bytes .*got True"),
    ("cua:", r"field 'reply_caps.cua': must be a positive whole number of bytes .*got None"),
    ("codr: 4096", r"field 'reply_caps.codr': unknown role 'codr'"),
    ("[4096]", r"'reply_caps' must map role names to bytes"),
])
def test_a_reply_cap_per_role_must_be_a_positive_whole_number_of_bytes_for_a_role(tmp_path, caps, problem):
    with ScriptedOpenAIServer() as server:
        with pytest.raises(ModelConfigError, match=problem) as caught:
            _yaml_registry(tmp_path, server, f"reply_caps: {{{caps}}}\n" if ":" in caps else f"reply_caps: {caps}\n")
    assert str(tmp_path / "models.yaml") in str(caught.value)


async def test_a_calls_max_reply_bytes_overrides_the_models_and_the_roles_cap(make_client):
    with ScriptedOpenAIServer(default=reply_text("x" * 100_000)) as server:
        client = make_client(server, cache=False, max_reply_bytes=1000)
        result = await client.chat([user_message("a")], role="cua", max_reply_bytes=200_000)
        assert len(result.text) == 100_000
        with pytest.raises(ReplyTooLargeError, match=r"max_reply_bytes= of this call"):
            await client.responses(role="coder", input="hi", max_reply_bytes=50_000)
        for bad in (0, -5, True, 1.5):
            with pytest.raises(ValueError, match="max_reply_bytes"):
                await client.chat([user_message("a")], role="coder", max_reply_bytes=bad)
        body = server.requests[0].json
    assert "max_reply_bytes" not in body  # ours, never sent to the endpoint


async def test_a_cached_reply_over_a_lowered_cap_is_refused_without_a_call(make_client):
    with ScriptedOpenAIServer([reply_text("x" * 20_000)]) as server:
        client = make_client(server, cache=True)
        await client.chat([user_message("a")], role="coder")
        with pytest.raises(ReplyTooLargeError, match="cached reply") as caught:
            await client.chat([user_message("a")], role="coder", max_reply_bytes=10_000)
    assert len(server.requests) == 1 and caught.value.cap_bytes == 10_000 and caught.value.status is None
    assert client.ledger.by_role()["coder"].failed_calls == 1


def test_reply_too_large_error_survives_pickling_with_its_fields():
    error = ReplyTooLargeError("too big", model="m", endpoint="http://e", role="cua", size_bytes=9, cap_bytes=4,
                               size_exact=False, status=200)
    copy = pickle.loads(pickle.dumps(error))
    assert type(copy) is ReplyTooLargeError and str(copy) == "too big"
    assert (copy.role, copy.size_bytes, copy.cap_bytes, copy.size_exact, copy.status, copy.retryable) == (
        "cua", 9, 4, False, 200, False)
