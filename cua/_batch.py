"""Many rollouts at once on one browser: a context each, a semaphore bounding how many run.

On 2 cores browser work does not scale, but rollouts mostly wait for models; overlapping those
waits is where throughput comes from (design.md §5).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ._check import Checker
from ._config import RolloutConfig
from ._policy import Policy
from ._rollout import rollout
from ._trajectory import Trajectory


@dataclass
class RolloutJob:
    """One rollout to run: the arguments of `rollout`, with its own (fresh) policy instance."""

    html: str | bytes
    task: str
    policy: Policy
    checker: Checker | None
    out_dir: str | Path
    app_id: str = "app"
    task_id: str = "task"
    expected_outcome: str = ""
    extra_files: dict[str, bytes] | None = None
    seed: int | None = None  # the app's Math.random seed (`rollout`)
    fixed_clock: bool = False


async def run_rollouts(
    jobs: Iterable[RolloutJob], config: RolloutConfig | None = None, concurrency: int = 2
) -> list[Trajectory]:
    """Run `jobs` with at most `concurrency` at a time; trajectories come back in job order.

    Raises:
        ValueError: `concurrency` < 1.
    """
    if concurrency < 1:
        raise ValueError(f"concurrency must be at least 1, got {concurrency}")
    gate = asyncio.Semaphore(concurrency)

    async def one(job: RolloutJob) -> Trajectory:
        async with gate:
            return await rollout(config=config, **vars(job))  # a job's fields are `rollout`'s arguments

    return list(await asyncio.gather(*(one(job) for job in jobs)))
