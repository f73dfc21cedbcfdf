"""The sweep: apps × coders × CUA policies × revision modes, each track through the design loop.

Tracks run a few at once on this process's event loop; their rollouts share one browser, bounded
by the run's `concurrency` (design.md §5). `sweep` is the Prefect flow (artifacts, cache,
retries); `sweep_without_prefect` runs the same stages' plain functions.
"""

# No `from __future__ import annotations` here: Prefect builds the flows' parameter models from these
# annotations, and a flow run loaded from its entrypoint (a deployment, `aui deploy`) cannot resolve them as strings.

import asyncio
import functools
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path

from prefect import flow

from experiment import ExperimentConfig, Plan, check_config
from insights import insights_of, write_insights
from results import INSIGHTS_FILE, AppRoundResult, Insights, Track, table_rows, variation_rows

from ._budget import run_budget
from ._dask import with_task_runner
from ._loop import design_loop, run_track
from ._refs import RunContext
from ._track import PLAIN_STAGES

TrackRunner = Callable[[RunContext, str, Track], Awaitable[list[AppRoundResult]]]
"""How one track runs: `run_one(run, app_id, track)`."""


def run_key_for(run_dir: Path) -> str:
    """The run folder's random id (made once); part of every cache key of this run."""
    path = run_dir / ".run-key"
    if not path.exists():
        run_dir.mkdir(parents=True, exist_ok=True)
        path.write_text(uuid.uuid4().hex)
    return path.read_text().strip()


def run_context(config: ExperimentConfig, run_dir: Path | None = None, run_key: str | None = None) -> RunContext:
    """The run's constants every stage shares (creates the run folder and its key on first use); `run_dir` and
    `run_key`: a run of its own inside another (an ablation's)."""
    run_dir = run_dir or config.run_dir.resolve()
    return RunContext(run_key=run_key or run_key_for(run_dir), run_dir=str(run_dir), apps=str(config.apps),
                      models=str(config.models_config) if config.models_config else None,
                      v0_dir=str(config.v0_dir) if config.v0_dir else None)


async def run_tracks(config: ExperimentConfig, plan: Plan, run_one: TrackRunner,
                     on_start: Callable[[int], Awaitable[None]] | None = None,
                     on_track_done: Callable[[], Awaitable[None]] | None = None) -> list[AppRoundResult]:
    """The plan's apps × tracks (coders × CUAs × modes), each through `run_one(run, app_id, track)`, a few at once."""
    from ._cache import start_run_cache
    from ._finish import write_manifest

    run = run_context(config)
    write_manifest(config, plan, run.root, start_run_cache(run.root, config.reuse_stale))
    tracks = [(app_id, track) for app_id in plan.app_ids for track in plan.tracks]
    if on_start is not None:
        await on_start(len(tracks))
    track_gate = asyncio.Semaphore(max(2, plan.rollout_slots))

    async def one(app_id: str, track: Track) -> list[AppRoundResult]:
        async with track_gate:
            results = await run_one(run, app_id, track)
        if on_track_done is not None:
            await on_track_done()
        return results

    nested = await asyncio.gather(*(one(app_id, track) for app_id, track in tracks))
    return [result for track_results in nested for result in track_results]


@flow(name="aui-sweep", flow_run_name="sweep {config.name}")
async def sweep(config: ExperimentConfig, plan: Plan | None = None) -> list[AppRoundResult]:
    """apps × coders × CUA policies × revision modes, each through `design_loop`; then results and report.
    `plan`: the config's checked plan (`experiment.check_config`; None: checked here, endpoints not probed)."""
    from ._artifacts import Progress, publish_insights, publish_table, publish_variations
    from ._finish import finish_run

    plan = plan if plan is not None else check_config(config, probe_endpoints=False)
    progress = Progress(config)
    run_one = functools.partial(with_task_runner(design_loop, config), config, plan=plan)
    run_dir = config.run_dir.resolve()
    async with run_budget(config.budget, run_dir, run_key_for(run_dir)):
        results = await run_tracks(config, plan, run_one, progress.start, progress.track_done)
    await publish_table(config, table_rows(results, config.weights))
    if varied := variation_rows(results):
        await publish_variations(config, varied)
    if config.insights:
        await publish_insights(config, await write_run_insights(config, results))
    finish_run(config, plan, config.run_dir.resolve(), results)
    return results


async def write_run_insights(config: ExperimentConfig, results: list[AppRoundResult]) -> Insights:
    """The run's design insights in insights.json (before `finish_run`, so the report shows them)."""
    run_dir = config.run_dir.resolve()
    found = await insights_of([run_dir], {run_dir: results})
    write_insights(found, run_dir / INSIGHTS_FILE)
    return found


async def sweep_without_prefect(config: ExperimentConfig, plan: Plan | None = None) -> list[AppRoundResult]:
    """The same sweep with the stages' plain functions: no Prefect server, cache, retries or artifacts."""
    from ._finish import finish_run

    plan = plan if plan is not None else check_config(config, probe_endpoints=False)
    run_one = functools.partial(run_track, config, stages=PLAIN_STAGES, plan=plan)
    run_dir = config.run_dir.resolve()
    async with run_budget(config.budget, run_dir, run_key_for(run_dir), shared=False):  # no Prefect: one process
        results = await run_tracks(config, plan, run_one)
    if config.insights:
        await write_run_insights(config, results)
    finish_run(config, plan, config.run_dir.resolve(), results)
    return results
