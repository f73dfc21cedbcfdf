"""Stages on a Dask cluster through `prefect-dask` (`--task-runner dask --dask-address tcp://…`).

Two things make the stages behave on Dask workers:

- The flow *submits* each stage to its task runner (`submitted`) instead of calling it in
  the flow's thread, and waits for the future without blocking the flow's event loop.
- `prefect-dask` runs every async task with a fresh `asyncio.run` on the worker. A browser and an
  HTTP client belong to the event loop that made them, so each stage body is moved onto one
  long-lived event loop per worker process (`on_worker_loop`): one browser per worker, reused by
  every stage it runs, and model clients that stay usable between tasks. The stage's model calls
  charge its run's budget there (`flows._budget.with_run_budget`: the one ledger on the Prefect server).

Results are persisted to the workers' result storage (`$PREFECT_HOME/storage`): on one machine
that is the flow's own; across machines, point `PREFECT_LOCAL_STORAGE_PATH` at a shared folder.
"""

from __future__ import annotations

import asyncio
import functools
import sys
import threading
from dataclasses import fields, replace
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from llm import MissingOptionalPackageError, Registry

from ._budget import with_run_budget

R = TypeVar("R")

_worker_loop: asyncio.AbstractEventLoop | None = None
_worker_loop_lock = threading.Lock()


def on_dask_worker() -> bool:
    """True inside a task running on a Dask worker (False when `distributed` is not installed)."""
    if "distributed" not in sys.modules:  # a Dask worker has imported it; importing it to ask costs ≈ 0.6 s
        return False
    from distributed import get_worker
    try:
        get_worker()
    except ValueError:
        return False
    return True


def _loop_of_this_worker() -> asyncio.AbstractEventLoop:
    global _worker_loop
    with _worker_loop_lock:
        if _worker_loop is None or _worker_loop.is_closed():
            loop = asyncio.new_event_loop()
            threading.Thread(target=loop.run_forever, name="aui-stage-loop", daemon=True).start()
            _worker_loop = loop
        return _worker_loop


def on_worker_loop(stage: Callable[..., Awaitable[R]]) -> Callable[..., Awaitable[R]]:
    """Run `stage` on this Dask worker's long-lived event loop; elsewhere, just await it."""

    @functools.wraps(stage)
    async def wrapper(*args: Any, **kwargs: Any) -> R:
        if not on_dask_worker():
            return await stage(*args, **kwargs)
        # The run's budget comes along: its limits from the run folder, its ledger on the Prefect server.
        work = with_run_budget(kwargs.get("run"), lambda: stage(*args, **kwargs))
        future = asyncio.run_coroutine_threadsafe(work, _loop_of_this_worker())
        return await asyncio.wrap_future(future)

    return wrapper


TASK_RUNNERS: Registry[Any] = Registry("task runner")
"""Task runners other than Prefect's default, by the name `--task-runner` takes."""
TASK_RUNNERS.register_lazy("dask", "prefect_dask:DaskTaskRunner", requires="prefect-dask==0.3.7")


def dask_task_runner(address: str):
    """A `DaskTaskRunner` on the cluster at `address`.

    Raises:
        RuntimeError: `prefect-dask` is not installed (the message gives the pip command).
    """
    try:
        runner = TASK_RUNNERS.get("dask")
    except MissingOptionalPackageError as exc:
        raise RuntimeError(f"--task-runner dask: {exc}") from None
    return runner(address=address)


def with_task_runner(flow: Any, config: Any) -> Any:
    """`flow` on the task runner `config` names: Dask's (`dask_task_runner`), or the one it has."""
    if config.task_runner == "dask":
        return flow.with_options(task_runner=dask_task_runner(config.dask_address))
    return flow


def submitted(stages):
    """The same `Stages`, each one submitted to the flow's task runner and its final state awaited without blocking
    (`flows._cache.tallied` calls them so, with `return_state=True`, and takes the result from the state)."""
    return replace(stages, **{f.name: functools.partial(_submit_and_wait, getattr(stages, f.name)) for f in fields(stages)})


async def _submit_and_wait(stage, *, return_state: bool, **inputs: Any) -> Any:
    # Always the final state: `tallied`, the one caller, asks for it (`return_state=True`) as it asks a plain stage.
    future = stage.submit(**inputs)
    # `wait()` blocks until the worker is done: wait in a thread, so the flow's loop (and the
    # other tracks and rollouts it drives) keeps going meanwhile.
    await asyncio.to_thread(future.wait)
    return future.state
