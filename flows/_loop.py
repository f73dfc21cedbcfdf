"""The design loop and the sweep, as Prefect flows that read like the paper's Figure 4.

    v0 = generate(app)            tasks = propose(app)
    for round in 0..R:
        verdicts = verify(v, tasks)                        → FC
        trajectories = roll out every task with a checker  → SR, dashboards
        if round < R: feedback = comment(failed dashboards); v = revise(v, mode, feedback, verdicts)

Rollouts of a round run concurrently on this process's one browser, bounded by a semaphore
(design.md §5); every stage is a cached Prefect task, so a re-run resumes where it stopped.
The same loop runs without Prefect (`sweep_without_prefect`, the stages' plain functions): the
benchmark's baseline for Prefect's overhead, and a way to debug a stage without a server.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from prefect import flow, get_run_logger

from apps_prompts import Task, load_apps

from ._config import ExperimentConfig
from ._results import AppRoundResult, TaskOutcome, table_rows
from ._revision import comment_failures, revise_version
from ._stages import RolloutRef, VersionRef, generate_initial, propose_tasks, rollout_task, verify_version


@dataclass(frozen=True)
class Stages:
    """The loop's six stages: Prefect tasks (cached, visible in the UI) or their plain functions."""

    generate: Callable[..., Awaitable[Any]]
    propose: Callable[..., Awaitable[Any]]
    verify: Callable[..., Awaitable[Any]]
    rollout: Callable[..., Awaitable[Any]]
    comment: Callable[..., Awaitable[Any]]
    revise: Callable[..., Awaitable[Any]]


PREFECT_STAGES = Stages(generate_initial, propose_tasks, verify_version, rollout_task, comment_failures, revise_version)
PLAIN_STAGES = Stages(*(getattr(PREFECT_STAGES, field.name).fn for field in fields(Stages)))

_rollout_gates: dict[tuple[int, int], asyncio.Semaphore] = {}
_stage_locks: dict[tuple, asyncio.Lock] = {}


def _rollout_gate(limit: int) -> asyncio.Semaphore:
    """One semaphore per event loop bounds all rollouts in flight, across apps and tracks."""
    return _rollout_gates.setdefault((id(asyncio.get_running_loop()), limit), asyncio.Semaphore(limit))


def _one_at_a_time(*key: object) -> asyncio.Lock:
    """A lock per identical stage call (per event loop).

    Round 0 is shared by every revision mode and CUA of an app (same version, same folders): with
    the lock, the second track waits for the first and then gets its cached result, instead of
    repeating the work (and its model calls) concurrently into the same files.
    """
    return _stage_locks.setdefault((id(asyncio.get_running_loop()), *key), asyncio.Lock())


def run_key_for(run_dir: Path) -> str:
    """The run folder's random id (made once); part of every cache key of this run."""
    path = run_dir / ".run-key"
    if not path.exists():
        run_dir.mkdir(parents=True, exist_ok=True)
        path.write_text(uuid.uuid4().hex)
    return path.read_text().strip()


@flow(name="design-loop", flow_run_name="{app_id} · {coder} · {cua} · {mode}")
async def design_loop(config: ExperimentConfig, app_id: str, coder: str, cua: str, mode: str, run_key: str) -> list[AppRoundResult]:
    """One app through R rounds of judge-and-revise with one coder, one CUA and one revision mode."""
    from ._artifacts import publish_round
    from ._dask import submitted

    stages = submitted(PREFECT_STAGES) if config.task_runner == "dask" else PREFECT_STAGES
    return await judge_and_revise(config, app_id, coder, cua, mode, run_key, stages,
                                  logger=get_run_logger(), on_round=publish_round)


async def judge_and_revise(config: ExperimentConfig, app_id: str, coder: str, cua: str, mode: str, run_key: str,
                           stages: Stages, *, logger: Any = None,
                           on_round: Callable[[ExperimentConfig, AppRoundResult], Awaitable[None]] | None = None,
                           ) -> list[AppRoundResult]:
    """The body of `design_loop`, with the stages given (Prefect tasks or plain functions)."""
    logger = logger or logging.getLogger("flows")
    run_dir = str(config.run_dir.resolve())
    apps, models = str(config.apps), str(config.models_config) if config.models_config else None
    v0_dir = str(config.v0_dir) if config.v0_dir else None
    track = _track(coder, cua, mode)
    async with _one_at_a_time("generate", run_dir, app_id, coder):
        version = await stages.generate(run_key, run_dir, apps, app_id, coder, models, v0_dir)
    async with _one_at_a_time("propose", run_dir, app_id, config.proposer):
        tasks_ref = await stages.propose(run_key, run_dir, apps, app_id, config.proposer,
                                         str(config.tasks_file) if config.tasks_file else None, config.tasks_per_app, models)
    tasks = [Task.model_validate(t) for t in json.loads((Path(run_dir) / tasks_ref.path).read_text())]
    domain = next(a.domain.value for a in load_apps(config.apps).apps if a.id == app_id)
    results: list[AppRoundResult] = []
    for round_ in range(config.rounds + 1):
        async with _one_at_a_time("verify", run_dir, version.path, config.verifier):
            verdicts = await stages.verify(run_key, run_dir, apps, app_id, round_, version.path, version.sha,
                                           tasks_ref.path, tasks_ref.sha, config.verifier, models)
        checkers = json.loads((Path(run_dir) / verdicts.path).read_text())
        checker_by_task = {v["task_id"]: v.get("checker") for v in checkers["verdicts"]}
        rollouts = await _roll_out_round(config, stages, run_key, run_dir, app_id, round_, version, tasks,
                                         verdicts.valid, checker_by_task, cua, models)
        result = _round_result(config, app_id, domain, coder, cua, mode, round_, version, tasks, verdicts, rollouts)
        results.append(result)
        logger.info("%s round %d: FC %.1f%% SR %.1f%%", app_id, round_, 100 * result.fc, 100 * result.sr)
        if on_round is not None:
            await on_round(config, result)
        if round_ == config.rounds:
            break
        feedback = await stages.comment(run_key, run_dir, app_id, round_, mode, version.path, version.sha,
                                        [r.trajectory for r in rollouts.values() if not r.success],
                                        config.commenter, config.commenter_mode, models, track)
        version = await stages.revise(run_key, run_dir, apps, app_id, round_ + 1, mode, version.path, version.sha,
                                      verdicts.path, verdicts.sha, tasks_ref.path, feedback.path if feedback else None,
                                      feedback.sha if feedback else None, coder, config.style_block, v0_dir, models, track)
    return results


def _track(coder: str, cua: str, mode: str) -> str:
    return f"{coder}/{cua}/{mode}".replace(":", "-")


async def _roll_out_round(config, stages: Stages, run_key, run_dir, app_id, round_, version: VersionRef, tasks, valid,
                          checker_by_task, cua, models) -> dict[str, RolloutRef]:
    gate = _rollout_gate(config.concurrency)
    version_dir = Path(version.path).parent

    async def one(task: Task) -> tuple[str, RolloutRef]:
        out_path = str(version_dir / "rollouts" / cua / task.id)
        # The folder's lock first, then a browser slot: a track waiting for another's identical
        # rollout (round 0 is shared) holds no slot meanwhile.
        async with _one_at_a_time("rollout", run_dir, out_path), gate:
            ref = await stages.rollout(run_key, run_dir, app_id, round_, task.id, task.description, task.expected_outcome,
                                       checker_by_task[task.id], version.path, version.sha, cua, config.cua_model,
                                       config.max_steps, models, out_path)
            return task.id, ref

    pairs = await asyncio.gather(*(one(t) for t in tasks if valid.get(t.id)))
    return dict(pairs)


def _round_result(config, app_id, domain, coder, cua, mode, round_, version: VersionRef, tasks, verdicts, rollouts) -> AppRoundResult:
    outcomes = []
    for task in tasks:
        ref = rollouts.get(task.id)
        outcomes.append(TaskOutcome(
            task_id=task.id,
            solvable=verdicts.valid.get(task.id, False),
            checker_valid=verdicts.valid.get(task.id, False),
            success=bool(ref and ref.success),
            termination=ref.termination if ref else None,
            steps=ref.steps if ref else 0,
            trajectory=ref.trajectory if ref else None,
            dashboard=ref.dashboard if ref else None,
            reason=(ref.error if ref else verdicts.reasons.get(task.id)) or None,
        ))
    screenshot = None
    initial = [r for r in rollouts.values() if r.trajectory]
    if initial:
        candidate = Path(initial[0].trajectory) / "step_000.png"
        if (Path(config.run_dir) / candidate).exists():
            screenshot = str(candidate)
    offline_roles = [role for role, name in (("coder", coder), ("verifier", config.verifier), ("proposer", config.proposer),
                                             ("commenter", config.commenter)) if name == "offline"]
    if cua == "heuristic":
        offline_roles.append("cua")
    return AppRoundResult(app_id=app_id, domain=domain, coder=coder, cua=cua, mode=mode, round=round_,
                          html=version.path, html_sha=version.sha, screenshot=screenshot, tasks=outcomes,
                          contract=version.contract, offline_roles=offline_roles)


def _apps_with_v0(config: ExperimentConfig, app_ids: list[str]) -> list[str]:
    """The offline coder starts from `v0_dir/ID/index.html`: named apps must have one; with no
    names, the run covers the apps that do (a 12-app folder against 52 prompts)."""
    have = {path.parent.name for path in Path(config.v0_dir).glob("*/index.html")}
    if config.app_ids:
        missing = [app_id for app_id in app_ids if app_id not in have]
        if missing:
            raise ValueError(f"--v0-dir {config.v0_dir}: no {missing[0]}/index.html (missing for {len(missing)} app(s): {', '.join(missing[:5])})")
        return app_ids
    chosen = [app_id for app_id in app_ids if app_id in have]
    if not chosen:
        raise ValueError(f"--v0-dir {config.v0_dir}: none of the {len(app_ids)} apps in {config.apps} has an ID/index.html there")
    return chosen


TrackRunner = Callable[[str, str, str, str, str], Awaitable[list[AppRoundResult]]]


async def run_tracks(config: ExperimentConfig, run_track: TrackRunner,
                     on_start: Callable[[int], Awaitable[None]] | None = None,
                     on_track_done: Callable[[], Awaitable[None]] | None = None) -> list[AppRoundResult]:
    """apps × coders × CUAs × modes, each through `run_track(app, coder, cua, mode, run_key)`, a few at once."""
    from ._finish import write_manifest

    run_dir = config.run_dir.resolve()
    run_key = run_key_for(run_dir)
    write_manifest(config, run_dir)
    specs = load_apps(config.apps).raise_for_errors()
    app_ids = config.app_ids or [s.id for s in specs]
    unknown = sorted(set(app_ids) - {s.id for s in specs})
    if unknown:
        raise ValueError(f"unknown app id(s) {unknown} in {config.apps}")
    if config.v0_dir is not None and "offline" in config.coders:
        app_ids = _apps_with_v0(config, app_ids)
    tracks = list(itertools.product(app_ids, config.coders, config.cua_policies, config.revision_modes))
    if on_start is not None:
        await on_start(len(tracks))
    track_gate = asyncio.Semaphore(max(2, config.concurrency))

    async def one(app_id, coder, cua, mode) -> list[AppRoundResult]:
        async with track_gate:
            results = await run_track(app_id, coder, cua, mode, run_key)
        if on_track_done is not None:
            await on_track_done()
        return results

    nested = await asyncio.gather(*(one(*t) for t in tracks))
    return [r for track in nested for r in track]


@flow(name="aui-sweep", flow_run_name="sweep {config.name}")
async def sweep(config: ExperimentConfig) -> list[AppRoundResult]:
    """apps × coders × CUA policies × revision modes, each through `design_loop`; then results and report."""
    from ._artifacts import Progress, publish_table
    from ._finish import finish_run

    progress = Progress(config)
    loop_flow = design_loop
    if config.task_runner == "dask":
        from ._dask import dask_task_runner

        loop_flow = design_loop.with_options(task_runner=dask_task_runner(config.dask_address))

    async def run_track(app_id, coder, cua, mode, run_key):
        return await loop_flow(config, app_id, coder, cua, mode, run_key)

    results = await run_tracks(config, run_track, progress.start, progress.track_done)
    await publish_table(config, table_rows(results))
    finish_run(config, config.run_dir.resolve(), results)
    return results


async def sweep_without_prefect(config: ExperimentConfig) -> list[AppRoundResult]:
    """The same sweep with the stages' plain functions: no Prefect server, cache, retries or artifacts."""
    from ._finish import finish_run

    async def run_track(app_id, coder, cua, mode, run_key):
        return await judge_and_revise(config, app_id, coder, cua, mode, run_key, PLAIN_STAGES)

    results = await run_tracks(config, run_track)
    finish_run(config, config.run_dir.resolve(), results)
    return results
