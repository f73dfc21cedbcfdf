"""The latency server: every request answered through the real `openai` client after a drawn latency."""

from __future__ import annotations

import asyncio
import random
import statistics

import pytest

from llm import Latency, ModelClient, user_message
from llm.testing import (
    LatencyOpenAIServer,
    RecordedRequest,
    assistant_turns,
    reply_text,
    scripted_model,
    scripted_registry,
    uitars_click,
    uitars_finished,
    uitars_type,
)


def test_latency_parses_fixed_and_lognormal_and_names_bad_text():
    assert Latency.parse("1.5") == Latency.fixed(1.5)
    assert Latency.parse("lognormal:2") == Latency.lognormal(2.0)
    assert Latency.parse("lognormal:2:0.8") == Latency(2.0, "lognormal", 0.8)
    for bad in ("fast", "lognormal:x", "gamma:1", "-1"):
        with pytest.raises(ValueError, match="latency"):
            Latency.parse(bad)


def test_a_lognormal_latency_keeps_its_mean_and_has_a_tail():
    rng = random.Random(7)
    draws = [Latency.lognormal(1.0, 0.5).sample(rng) for _ in range(20_000)]
    assert statistics.fmean(draws) == pytest.approx(1.0, rel=0.03)
    assert statistics.median(draws) < 0.95  # skewed: the median sits below the mean
    assert max(draws) > 3.0
    assert {Latency.fixed(0.25).sample(rng) for _ in range(5)} == {0.25}


async def test_each_model_gets_its_latency_and_calls_overlap():
    def answer(request: RecordedRequest):
        return reply_text(f"model {request.json['model']}, {assistant_turns(request)} earlier turns")

    latencies = {"slow-model": Latency.fixed(0.4), "*": Latency.fixed(0.1)}
    with LatencyOpenAIServer(answer, latencies, seed=1) as server:
        registry = scripted_registry(server).with_models(
            scripted_model(server, name="slow", model="slow-model"))
        client = ModelClient(registry, cache=False)
        replies = await asyncio.gather(*(client.chat([user_message("hi")], model="slow") for _ in range(6)),
                                       client.chat([user_message("hi")], role="coder"))
        await client.aclose()
    assert [r.text for r in replies] == ["model slow-model, 0 earlier turns"] * 6 + ["model scripted-model, 0 earlier turns"]
    assert sorted(r.delay_s for r in server.requests) == [0.1] + [0.4] * 6
    assert server.max_in_flight == 7  # the server waits for all of them at once, not one after another
    assert server.in_flight == 0


def test_uitars_replies_escape_what_their_grammar_quotes():
    assert uitars_click(10.4, 20.6) == "Thought: I click the control.\nAction: click(point='<point>10 21</point>')"
    assert uitars_type("it's\n") == "Thought: I type the value.\nAction: type(content='it\\'s\\n')"
    assert uitars_finished("a\\b").endswith("finished(content='a\\\\b')")
