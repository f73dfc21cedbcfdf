"""The room's one event loop: a daemon thread on which every environment of this process runs its `cua.AppEnv`.

Playwright's async API and the browser it launches belong to the event loop that started them, and
`cua` keeps one browser per loop (`cua.get_browser`). A Gymnasium environment is synchronous, so the
room runs one loop in a background thread, started on first use (importing the room starts nothing),
and every `reset` / `step` / `close` submits a coroutine there and waits for it — with a bound, so a
hung page or a dead loop is an error naming what happened, never a wait without end. N environments
(a vector environment's) thus share one loop and one browser, and their steps overlap there.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import contextlib
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

from cua import close_browser

T = TypeVar("T")

SHUTDOWN_TIMEOUT_S = 30.0
"""How long `shutdown` waits for the browser to close before leaving it to the process's exit."""

_lock = threading.Lock()
_loop: asyncio.AbstractEventLoop | None = None
_thread: threading.Thread | None = None


class LoopDied(RuntimeError):
    """The room's event loop thread is no longer running: its environments (their pages) are gone."""


def event_loop() -> asyncio.AbstractEventLoop:
    """The room's running loop, started on first use (a daemon thread named `environments-loop`)."""
    global _loop, _thread
    with _lock:
        if _loop is None or not _loop.is_running() and _thread is not None and not _thread.is_alive():
            ready = threading.Event()
            _loop = asyncio.new_event_loop()
            _loop.call_soon(ready.set)
            _thread = threading.Thread(target=_loop.run_forever, name="environments-loop", daemon=True)
            _thread.start()
            ready.wait(SHUTDOWN_TIMEOUT_S)
            atexit.unregister(shutdown)
            atexit.register(shutdown)
        return _loop


def run(coroutine: Coroutine[Any, Any, T], loop: asyncio.AbstractEventLoop, timeout_s: float, what: str) -> T:
    """Run `coroutine` on `loop` (the room's, as `event_loop()` gave it) and return its result or raise its exception.

    Raises:
        TimeoutError: no answer within `timeout_s` (the coroutine is cancelled); `what` names the call.
        LoopDied: `loop` is no longer running (`shutdown()` was called, or its thread died).
        RuntimeError: called from the loop's own thread (it would wait for itself).
    """
    if not loop.is_running() or loop is not _loop:
        coroutine.close()
        raise LoopDied(f"{what}: the environments' event loop has stopped (shutdown() was called, or its thread died): "
                       "this environment's page is gone; make the environment again")
    if threading.current_thread() is _thread:
        coroutine.close()
        raise RuntimeError(f"{what}: called on the environments' own event loop thread; call it from another thread")
    future = asyncio.run_coroutine_threadsafe(coroutine, loop)
    try:
        return future.result(timeout_s)
    except concurrent.futures.TimeoutError:
        if future.done():
            raise  # the coroutine's own TimeoutError, not the wait's
        future.cancel()
        if not loop.is_running():
            raise LoopDied(f"{what}: the environments' event loop stopped while it ran") from None
        raise TimeoutError(f"{what} did not finish within {timeout_s:g} s (the page or the machine is too slow, or "
                           "the event loop is blocked); it was cancelled") from None


def shutdown() -> None:
    """Close the room's browser and stop its loop thread (at exit, or to free the browser now).

    Environments made before are unusable after it (their calls raise `LoopDied`); ones made after
    start a new loop. Idempotent.
    """
    global _loop, _thread
    with _lock:
        loop, thread, _loop, _thread = _loop, _thread, None, None
    if loop is None or thread is None or not thread.is_alive():
        return
    with contextlib.suppress(Exception):  # a browser that will not close is the process's exit's to end
        asyncio.run_coroutine_threadsafe(close_browser(), loop).result(SHUTDOWN_TIMEOUT_S)
    loop.call_soon_threadsafe(loop.stop)
    thread.join(SHUTDOWN_TIMEOUT_S)
    if not thread.is_alive():
        loop.close()
