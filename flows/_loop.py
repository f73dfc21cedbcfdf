"""The design loop as a Prefect flow that reads like the paper's Figure 4.

    v0 = generate(app)            tasks = propose(app)
    for round in 0..R:
        verdicts = verify(v, tasks)                        → FC
        trajectories = roll out every task with a checker  → SR, dashboards
        and in every other variation of the app's look     → SR per variation (OpenApps)
        if round < R: feedback = comment(failed dashboards); v = revise(v, mode, feedback, verdicts)

Every stage is a cached Prefect task, so a re-run resumes where it stopped; `TrackSteps` (in
`_track.py`) holds what surrounds each call (shared work done once, model failures recorded).
The same loop runs without Prefect (`PLAIN_STAGES`): the benchmark's baseline for Prefect's
overhead, and a way to debug a stage without a server.
"""

# No `from __future__ import annotations` here: Prefect builds the flows' parameter models from these
# annotations, and a flow run loaded from its entrypoint (a deployment, `aui deploy`) cannot resolve them as strings.

from collections.abc import Awaitable, Callable

from prefect import flow, get_run_logger

from experiment import ExperimentConfig, Plan
from results import AppRoundResult, Track

from ._cache import CacheTally, tallied, tally_for
from ._refs import RunContext
from ._track import PREFECT_STAGES, Stages, TrackSteps


@flow(name="design-loop", flow_run_name="{app_id} · {track}")
async def design_loop(config: ExperimentConfig, run: RunContext, app_id: str, track: Track,
                      plan: Plan) -> list[AppRoundResult]:
    """One app through R rounds of judge-and-revise with one coder, one CUA and one revision mode (`plan`: who plays
    each role, resolved before the run)."""
    from ._artifacts import publish_round

    stages = prefect_stages(config, tally_for(run.run_dir))
    steps = TrackSteps(config, run, app_id, track, stages, get_run_logger(), plan)
    return await judge_and_revise(steps, config.rounds, on_round=lambda result: publish_round(config, result))


def prefect_stages(config: ExperimentConfig, tally: CacheTally) -> Stages:
    """The Prefect stages, submitted to the flow's task runner on Dask, each counted in `tally` as ran or reused."""
    from ._dask import submitted

    return tallied(submitted(PREFECT_STAGES) if config.task_runner == "dask" else PREFECT_STAGES, tally)


async def judge_and_revise(steps: TrackSteps, rounds: int,
                           on_round: Callable[[AppRoundResult], Awaitable[None]] | None = None) -> list[AppRoundResult]:
    """Figure 4: generate and propose, then per round verify → roll out (each variation too) → record → comment → revise."""
    version = await steps.generate()
    tasks = await steps.propose()
    if version is None or tasks is None:
        results = steps.unjudged(version, tasks)  # nothing to judge: every round says why
        for result in results:
            await _announce(on_round, result)
        return results
    results = []
    for round_ in range(rounds + 1):
        verdicts = await steps.verify(version, tasks)                        # → FC
        rollouts = await steps.roll_out(version, tasks, verdicts)            # → SR, dashboards
        varied = await steps.roll_out_variations(version, tasks, verdicts)   # → SR per variation
        results.append(steps.record(version, tasks, verdicts, rollouts))
        await _announce(on_round, results[-1])
        if round_ == rounds or steps.out_of_budget():
            break  # (out of budget: the rounds not started are left for a re-run with a higher budget)
        feedback = await steps.comment(version, verdicts, steps.revised_on(rollouts, varied))
        version = await steps.revise(version, verdicts, tasks, feedback)     # v(k) → v(k+1)
    return results


async def run_track(config: ExperimentConfig, run: RunContext, app_id: str, track: Track, stages: Stages,
                    plan: Plan | None = None) -> list[AppRoundResult]:
    """The same loop without a flow around it (stages as given: plain functions or Prefect tasks)."""
    return await judge_and_revise(TrackSteps(config, run, app_id, track, stages, plan=plan), config.rounds)


async def _announce(on_round: Callable[[AppRoundResult], Awaitable[None]] | None, result: AppRoundResult) -> None:
    if on_round is not None:
        await on_round(result)
