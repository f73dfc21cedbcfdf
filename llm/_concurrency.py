"""How many calls to one model endpoint may be in flight at once (`max_concurrency` in the registry).

The limit is per process, shared by every client, role and event loop that calls the endpoint:
a vLLM server with 8 slots answers the 9th request only after queueing it, so sending more just
moves the wait (and its timeouts) onto the server. Across processes (Dask workers, work-pool
flow runs) the flows put a Prefect global concurrency limit in front of this one
(`set_cross_process_limiter`); `llm` itself never imports Prefect.

Why not `asyncio.Semaphore`: it belongs to one event loop, and one process here runs model calls
on more than one (the flow's loop, a Dask worker's stage loop, `chat_sync`'s `asyncio.run`).
"""

from __future__ import annotations

import asyncio
import threading
from collections import deque
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager, nullcontext

from ._config import ModelConfig

CrossProcessLimiter = Callable[[str, int], AbstractAsyncContextManager[None]]
"""`(limit name, limit) -> async context manager` holding one slot of a limit shared across processes."""


class ProcessSemaphore:
    """A counting semaphore that coroutines on any event loop of this process may share."""

    def __init__(self, limit: int) -> None:
        if limit < 1:
            raise ValueError(f"a concurrency limit must be at least 1, got {limit}")
        self.limit = limit
        self._lock = threading.Lock()
        self._free = limit
        self._waiters: deque[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]] = deque()

    @property
    def in_use(self) -> int:
        with self._lock:
            return self.limit - self._free

    async def acquire(self) -> None:
        loop = asyncio.get_running_loop()
        with self._lock:
            if self._free > 0 and not self._waiters:
                self._free -= 1
                return
            waiter: asyncio.Future[None] = loop.create_future()
            self._waiters.append((loop, waiter))
        try:
            await waiter
        except asyncio.CancelledError:
            with self._lock:
                still_waiting = (loop, waiter) in self._waiters
                if still_waiting:
                    self._waiters.remove((loop, waiter))
            if not still_waiting:
                self.release()  # the slot was handed to us as we were cancelled: pass it on
            raise

    def release(self) -> None:
        with self._lock:
            if self._waiters:
                # The slot goes straight to the first waiter (no count change), on its own loop.
                loop, waiter = self._waiters.popleft()
                loop.call_soon_threadsafe(_grant, waiter)
                return
            self._free += 1

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        await self.acquire()
        try:
            yield
        finally:
            self.release()


def _grant(waiter: asyncio.Future[None]) -> None:
    # A waiter cancelled meanwhile gives its slot back itself (see `acquire`).
    if not waiter.done():
        waiter.set_result(None)


_registry_lock = threading.Lock()
_limits: dict[tuple[str, str], ProcessSemaphore] = {}
_cross_process: CrossProcessLimiter | None = None


def endpoint_limit(config: ModelConfig) -> ProcessSemaphore | None:
    """The process-wide semaphore of `config`'s endpoint, or None when the model sets no `max_concurrency`.

    Entries naming the same endpoint and model id share one semaphore, sized by the first of them
    called in this process (give such entries the same limit).
    """
    if config.max_concurrency is None:
        return None
    key = config.endpoint(), config.resolved("model") or config.name  # the endpoint and its model id (never the key)
    with _registry_lock:
        return _limits.setdefault(key, ProcessSemaphore(config.max_concurrency))


def set_cross_process_limiter(limiter: CrossProcessLimiter | None) -> None:
    """Hold a slot of a limit shared across processes too (None: this process's limit only)."""
    global _cross_process
    _cross_process = limiter


_calls_lock = threading.Lock()
_calls = {"waiting": 0, "sending": 0}


def model_calls_now() -> tuple[int, int]:
    """This process's model requests right now: (waiting for their endpoint's slot, sent and awaiting a reply).
    What a run's live display reads to tell a model-bound run from a CPU-bound one."""
    with _calls_lock:
        return _calls["waiting"], _calls["sending"]


def _count(state: str, by: int) -> None:
    with _calls_lock:
        _calls[state] += by


@asynccontextmanager
async def endpoint_slot(config: ModelConfig) -> AsyncIterator[None]:
    """One in-flight request to `config`'s endpoint, within its `max_concurrency` (no wait without one)."""
    semaphore = endpoint_limit(config)
    _count("waiting", 1)
    waiting = True
    try:
        async with semaphore.slot() if semaphore is not None else nullcontext():
            shared = _cross_process  # a limit shared across processes, named e.g. `model:uitars-1.5-7b`
            async with (shared(f"model:{config.name}", config.max_concurrency or 1)
                        if shared is not None and semaphore is not None else nullcontext()):
                _count("waiting", -1)
                _count("sending", 1)
                waiting = False
                try:
                    yield
                finally:
                    _count("sending", -1)
    finally:
        if waiting:
            _count("waiting", -1)
