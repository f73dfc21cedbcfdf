"""Usage accounting: tokens, latency and cost per call and per role; the JSON dump."""

from __future__ import annotations

import json

import pytest

from llm import ModelCallError, Prices, Usage, UsageLedger, user_message
from llm.testing import ScriptedOpenAIServer, reply_status, reply_text


def test_prices_are_per_million_tokens_with_cheaper_cached_input():
    prices = Prices(input_usd_per_1m=1.25, output_usd_per_1m=10.0, cached_input_usd_per_1m=0.125)
    assert prices.cost_usd(1_000_000, 0) == pytest.approx(1.25)
    assert prices.cost_usd(0, 500_000) == pytest.approx(5.0)
    assert prices.cost_usd(1_000_000, 0, cached_prompt_tokens=1_000_000) == pytest.approx(0.125)
    assert Prices(input_usd_per_1m=2, output_usd_per_1m=4).cost_usd(10, 10, cached_prompt_tokens=10) == pytest.approx(
        60 / 1_000_000
    )


def test_usage_reads_both_chat_and_responses_field_names():
    chat = {"usage": {"prompt_tokens": 5, "completion_tokens": 3,
                      "prompt_tokens_details": {"cached_tokens": 2},
                      "completion_tokens_details": {"reasoning_tokens": 1}}}
    responses = {"usage": {"input_tokens": 7, "output_tokens": 4, "output_tokens_details": {"reasoning_tokens": 2}}}
    assert Usage.from_response(chat) == Usage(prompt_tokens=5, completion_tokens=3, cached_prompt_tokens=2,
                                              reasoning_tokens=1)
    assert Usage.from_response(responses).total_tokens == 11
    assert Usage.from_response({}) == Usage()


async def test_ledger_aggregates_tokens_and_cost_per_role(make_client, tmp_path):
    script = [
        reply_text("a", prompt_tokens=1000, completion_tokens=100),
        reply_text("b", prompt_tokens=2000, completion_tokens=200),
        reply_status(400),
    ]
    with ScriptedOpenAIServer(script) as server:
        # scripted prices: $1 per 1M input tokens, $2 per 1M output tokens
        client = make_client(server)
        await client.chat([user_message("code it")], role="coder")
        await client.chat([user_message("comment it")], role="commenter")
        await client.chat([user_message("code it")], role="coder")  # cache hit
        with pytest.raises(ModelCallError):
            await client.chat([user_message("broken")], role="coder")

    by_role = client.ledger.by_role()
    coder, commenter = by_role["coder"], by_role["commenter"]
    assert (coder.calls, coder.cached_calls, coder.failed_calls) == (1, 1, 1)
    assert coder.prompt_tokens == 2000 and coder.completion_tokens == 200  # real + cached
    assert coder.cost_usd == pytest.approx((1000 * 1 + 100 * 2) / 1e6)
    assert coder.saved_cost_usd == pytest.approx((1000 * 1 + 100 * 2) / 1e6)
    assert commenter.cost_usd == pytest.approx((2000 * 1 + 200 * 2) / 1e6) and commenter.models == ["scripted"]
    assert coder.latency_s > 0
    total = client.ledger.total()
    assert total.calls == 2 and total.cost_usd == pytest.approx(coder.cost_usd + commenter.cost_usd)

    path = client.ledger.dump(tmp_path / "run" / "usage.json")
    data = json.loads(path.read_text())
    assert data["by_role"]["coder"]["calls"] == 1 and len(data["calls"]) == 4
    assert data["calls"][3]["error"].startswith("HTTP 400")


async def test_unpriced_models_are_counted_as_such(make_client):
    with ScriptedOpenAIServer([reply_text("x")]) as server:
        client = make_client(server, prices=None)
        await client.chat([user_message("hi")], role="verifier")
    usage = client.ledger.by_role()["verifier"]
    assert usage.unpriced_calls == 1 and usage.cost_usd == 0


def test_ledger_is_usable_from_several_threads():
    from concurrent.futures import ThreadPoolExecutor

    from llm import CallRecord

    ledger = UsageLedger()
    record = CallRecord(role="cua", model="m", api="chat", usage=Usage(prompt_tokens=1, completion_tokens=1),
                        cost_usd=0.5)
    with ThreadPoolExecutor(4) as pool:
        list(pool.map(lambda _: ledger.record(record), range(200)))
    assert ledger.by_role()["cua"].calls == 200 and ledger.total().cost_usd == pytest.approx(100)
