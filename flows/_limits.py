"""Model endpoints' `max_concurrency` across processes: Prefect global concurrency limits.

In one process `llm` holds each model's limit itself. When several processes call the same
endpoint — stages on Dask workers, or sweeps run by a work pool's workers — each would allow the
full limit on its own, so the flows add a Prefect global concurrency limit named `model:<name>`
(created on the Prefect server at first use, with the model's `max_concurrency`) that every
process holds a slot of for each request. `llm` never imports Prefect: it takes the limiter as a
callable (`llm.set_cross_process_limiter`).

On when a stage runs on a Dask worker, or when `AUI_GLOBAL_MODEL_LIMITS=1` is set (put it in a
work pool's job variables); never with the ephemeral server, which only one process can reach.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress

from llm import set_cross_process_limiter

GLOBAL_LIMITS_ENV = "AUI_GLOBAL_MODEL_LIMITS"
SLOT_WAIT_S = 1800.0
"""The longest a request waits for a global slot (each holder keeps one at most a model call's
time limit; a crashed holder's slot is freed when its lease runs out)."""

_made: dict[str, int] = {}


def use_cross_process_limits() -> None:
    """Install the Prefect limiter in this process when it shares endpoints with others (see above)."""
    from ._dask import on_dask_worker

    wanted = os.environ.get(GLOBAL_LIMITS_ENV, "").strip().lower() in ("1", "true", "yes", "on") or on_dask_worker()
    if wanted and os.environ.get("PREFECT_API_URL"):
        set_cross_process_limiter(prefect_model_limit)


async def ensure_limit(name: str, limit: int) -> None:
    """Create (or resize) the global concurrency limit `name` on the Prefect server, once per process."""
    if _made.get(name) == limit:
        return
    from prefect.client.orchestration import get_client
    from prefect.exceptions import ObjectAlreadyExists

    # Idempotent, so two coroutines (or processes) making it at once do no harm.
    async with get_client() as client:
        with suppress(ObjectAlreadyExists):  # another process created it between our read and our create
            await client.upsert_global_concurrency_limit_by_name(name, limit)
    _made[name] = limit


@asynccontextmanager
async def prefect_model_limit(name: str, limit: int) -> AsyncIterator[None]:
    """One slot of the global concurrency limit `name` (of size `limit`) for the length of one request."""
    from prefect.concurrency.asyncio import concurrency

    await ensure_limit(name, limit)
    async with concurrency(name, occupy=1, timeout_seconds=SLOT_WAIT_S, strict=True):
        yield
