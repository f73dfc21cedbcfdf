"""`max_concurrency` per model: the endpoint never sees more requests in flight, whoever sends them."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from llm import (Latency, ModelClient, ModelConfigError, ModelRegistry, ProcessSemaphore, endpoint_limit, model_calls_now,
                 user_message)
from llm.testing import LatencyOpenAIServer, ScriptedOpenAIServer, reply_text, scripted_registry


def ok(request):
    return reply_text("ok")


class HeldServer(ScriptedOpenAIServer):
    """Holds every request until `together` requests have been in flight at once, then answers `then_s` later.

    The overlap a test asserts is then made by the server, not hoped for from a fixed latency on a loaded
    machine (where the calls may reach the server further apart than the latency). A client that never sends
    `together` at once is answered from 30 s after its first request on, and fails on `max_in_flight`. The
    `then_s` gives a request past a limit the time to arrive and show itself.
    """

    def __init__(self, together: int, then_s: float = 0.15):
        super().__init__(self._answer)
        self.together, self.then_s = together, then_s
        self.give_up_at = None  # bounds a failure, not a measurement

    def _answer(self, request):
        if self.give_up_at is None:
            self.give_up_at = time.monotonic() + 30
        while self.max_in_flight < self.together and time.monotonic() < self.give_up_at:
            time.sleep(0.005)
        time.sleep(self.then_s)
        return reply_text("ok")


async def test_the_server_never_sees_more_than_max_concurrency_requests_in_flight():
    with HeldServer(together=3) as server:
        limited = ModelClient(scripted_registry(server, max_concurrency=3), cache=False)
        # Another client and another role of the same model share the same limit.
        other = ModelClient(scripted_registry(server, max_concurrency=3), cache=False)
        calls = [limited.chat([user_message(f"{n}")], role="cua") for n in range(8)]
        calls += [other.chat([user_message(f"{n}")], role="coder") for n in range(4)]
        replies = await asyncio.gather(*calls)
        await limited.aclose()
        await other.aclose()
    assert [r.text for r in replies] == ["ok"] * 12
    assert len(server.requests) == 12
    assert server.max_in_flight == 3


async def test_the_process_counts_calls_waiting_for_a_slot_and_calls_sent():
    """What the live display reads (`what limits the run`): 5 calls on a 2-slot endpoint are 2 sent, 3 waiting."""
    with LatencyOpenAIServer(ok, Latency.fixed(0.4)) as server:
        client = ModelClient(scripted_registry(server, max_concurrency=2), cache=False)
        before = model_calls_now()
        calls = asyncio.gather(*(client.chat([user_message(f"{n}")], role="cua") for n in range(5)))
        seen = []
        while not calls.done():  # sampled for the calls' whole life, however long a loaded machine makes it
            await asyncio.sleep(0.02)
            seen.append(model_calls_now())
        await calls
        await client.aclose()
    assert (before[0], before[1]) == (0, 0) and model_calls_now() == (0, 0)
    assert (3, 2) in seen, seen
    assert max(sending for _, sending in seen) == 2


async def test_without_a_limit_the_same_calls_all_overlap():
    """The limit is what holds the count down (the server itself would take them all at once)."""
    with HeldServer(together=8) as server:
        client = ModelClient(scripted_registry(server), cache=False)
        await asyncio.gather(*(client.chat([user_message(f"{n}")], role="cua") for n in range(8)))
        await client.aclose()
    assert server.max_in_flight == 8


def test_the_limit_holds_across_event_loops_in_threads():
    with HeldServer(together=2, then_s=0.1) as server:
        registry = scripted_registry(server, max_concurrency=2)

        def one_loop() -> None:
            async def calls() -> None:
                client = ModelClient(registry, cache=False)
                await asyncio.gather(*(client.chat([user_message(f"{n}")], role="cua") for n in range(4)))
                await client.aclose()

            asyncio.run(calls())

        threads = [threading.Thread(target=one_loop) for _ in range(3)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=60)
    assert len(server.requests) == 12
    assert server.max_in_flight == 2
    assert endpoint_limit(registry.get("scripted")).in_use == 0


async def test_a_waiter_cancelled_while_waiting_leaves_no_slot_taken():
    semaphore = ProcessSemaphore(1)
    await semaphore.acquire()
    waiter = asyncio.ensure_future(semaphore.acquire())
    await asyncio.sleep(0)
    waiter.cancel()
    semaphore.release()  # may hand the slot to the cancelled waiter, which must give it back
    with pytest.raises(asyncio.CancelledError):
        await waiter
    await asyncio.sleep(0)
    assert semaphore.in_use == 0
    await asyncio.wait_for(semaphore.acquire(), 1)  # the slot is free again
    assert semaphore.in_use == 1


def test_a_bad_max_concurrency_is_refused_naming_the_field():
    entry = {"name": "m", "provider": "openai-compatible", "model": "x", "base_url": "http://127.0.0.1:9/v1",
             "max_concurrency": 0}
    with pytest.raises(ModelConfigError, match=r"models\[0\] \(m\): field 'max_concurrency'"):
        ModelRegistry.from_dict({"models": [entry], "roles": {}}, source="models.yaml")
