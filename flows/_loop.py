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
from ._stages import RolloutRef, VersionRef, generate_initial, propose_tasks, rollout_task, use_browser_slots, verify_version


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

_stage_locks: dict[tuple, asyncio.Lock] = {}


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
    """The body of `design_loop`, with the stages given (Prefect tasks or plain functions).

    A model stage that still fails after its retries (the client's, then Prefect's) does not end
    the track: it degrades to an explicit error in the results (`AppRoundResult.errors`, and the
    affected tasks' `reason`) — see `_stage_failure`. A failed stage is not cached, so a re-run
    of the sweep tries it again.
    """
    logger = logger or logging.getLogger("flows")
    run_dir = str(config.run_dir.resolve())
    apps, models = str(config.apps), str(config.models_config) if config.models_config else None
    v0_dir = str(config.v0_dir) if config.v0_dir else None
    track = _track(coder, cua, mode)
    domain = next(a.domain.value for a in load_apps(config.apps).apps if a.id == app_id)
    version: VersionRef | None = None
    generate_error = propose_error = None
    try:
        async with _one_at_a_time("generate", run_dir, app_id, coder):
            version = await stages.generate(run_key, run_dir, apps, app_id, coder, models, v0_dir)
    except Exception as error:
        generate_error = _stage_failure(logger, app_id, "generating the first version", error)
    try:
        async with _one_at_a_time("propose", run_dir, app_id, config.proposer):
            tasks_ref = await stages.propose(run_key, run_dir, apps, app_id, config.proposer,
                                             str(config.tasks_file) if config.tasks_file else None, config.tasks_per_app, models)
    except Exception as error:
        propose_error = _stage_failure(logger, app_id, "proposing tasks", error)
    if propose_error is not None or version is None:
        # Nothing to judge: every round says why (no task list, or no app to run the tasks on).
        tasks = [] if propose_error else _read_tasks(run_dir, tasks_ref)
        errors = [e for e in (generate_error, propose_error) if e]
        results = [_unjudged_round(app_id, domain, coder, cua, mode, round_, version, tasks, errors, config)
                   for round_ in range(config.rounds + 1)]
        for result in results:
            if on_round is not None:
                await on_round(config, result)
        return results
    tasks = _read_tasks(run_dir, tasks_ref)
    results: list[AppRoundResult] = []
    carried: list[str] = []  # failures of the comment/revise stages that made this round's version
    for round_ in range(config.rounds + 1):
        errors, carried = carried, []
        verdicts = verify_error = None
        try:
            async with _one_at_a_time("verify", run_dir, version.path, config.verifier):
                verdicts = await stages.verify(run_key, run_dir, apps, app_id, round_, version.path, version.sha,
                                               tasks_ref.path, tasks_ref.sha, config.verifier, models)
        except Exception as error:
            verify_error = _stage_failure(logger, app_id, f"verifying round {round_}", error)
            errors.append(verify_error)
        rollouts: dict[str, RolloutRef] = {}
        if verdicts is not None:
            checkers = json.loads((Path(run_dir) / verdicts.path).read_text())
            checker_by_task = {v["task_id"]: v.get("checker") for v in checkers["verdicts"]}
            rollouts = await _roll_out_round(config, stages, run_key, run_dir, app_id, round_, version, tasks,
                                             verdicts.valid, checker_by_task, cua, models)
        result = _round_result(config, app_id, domain, coder, cua, mode, round_, version, tasks, verdicts, rollouts,
                               errors, verify_error)
        results.append(result)
        logger.info("%s round %d: FC %.1f%% SR %.1f%%", app_id, round_, 100 * result.fc, 100 * result.sr)
        if on_round is not None:
            await on_round(config, result)
        if round_ == config.rounds:
            break
        if verdicts is None:
            # No verdicts, nothing to revise from: the next round judges the same app again.
            carried.append(f"round {round_ + 1} keeps the round-{round_} version unrevised: its verification failed")
            version = _kept_version(run_dir, version, round_ + 1, track, carried[-1])
            continue
        feedback = None
        try:
            feedback = await stages.comment(run_key, run_dir, app_id, round_, mode, version.path, version.sha,
                                            [r.trajectory for r in rollouts.values() if not r.success],
                                            config.commenter, config.commenter_mode, models, track)
        except Exception as error:
            carried.append(_stage_failure(logger, app_id, f"commenting on round {round_}", error)
                           + "; revised without CUA feedback")
        if feedback is not None and feedback.errors:
            carried.append(f"commenting on round {round_}: {len(feedback.errors)} comment(s) failed and were left out "
                           f"of the feedback: {'; '.join(feedback.errors)}")
        try:
            version = await stages.revise(run_key, run_dir, apps, app_id, round_ + 1, mode, version.path, version.sha,
                                          verdicts.path, verdicts.sha, tasks_ref.path, feedback.path if feedback else None,
                                          feedback.sha if feedback else None, coder, config.style_block, v0_dir, models, track)
        except Exception as error:
            carried.append(_stage_failure(logger, app_id, f"revising to round {round_ + 1}", error)
                           + f"; round {round_ + 1} keeps the round-{round_} version")
            version = _kept_version(run_dir, version, round_ + 1, track, carried[-1])
    return results


def _stage_failure(logger: Any, app_id: str, doing: str, error: Exception) -> str:
    """The recorded text of a stage that failed for good; re-raises what is not a model fault.

    Model faults are what a model endpoint and its replies can do to a stage after every bounded
    retry: a failed call, no usable HTML, no usable tasks. Anything else is a bug or a broken
    setup and still stops the sweep, rather than hiding in the results.
    """
    from apps_prompts._proposer import ProposerError
    from coder import CoderError
    from llm import ModelCallError

    if not isinstance(error, ModelCallError | CoderError | ProposerError):
        raise error
    text = f"{doing} failed: {type(error).__name__}: {error}"
    logger.warning("%s: %s", app_id, text)
    return text


def _read_tasks(run_dir: str, tasks_ref) -> list[Task]:
    return [Task.model_validate(t) for t in json.loads((Path(run_dir) / tasks_ref.path).read_text())]


def _kept_version(run_dir: str, version: VersionRef, round_: int, track: str, why: str) -> VersionRef:
    """The previous version again, as round `round_`'s own copy (own folder, so its rollouts never
    overwrite the previous round's); `revision.json` says why it was not revised."""
    from cua import write_atomic

    folder = Path("apps", version.app_id, *track.split("/"), f"round-{round_}")
    html = (Path(run_dir) / version.path).read_bytes()
    write_atomic(Path(run_dir) / folder / "index.html", html)
    write_atomic(Path(run_dir) / folder / "revision.json",
                 json.dumps({"kept": version.path, "changed": False, "error": why}, indent=1).encode())
    return version.model_copy(update={"round": round_, "path": str(folder / "index.html"), "contract": None,
                                      "transforms": [], "usage": {}})


def _unjudged_round(app_id, domain, coder, cua, mode, round_, version: VersionRef | None, tasks: list[Task],
                    errors: list[str], config: ExperimentConfig) -> AppRoundResult:
    """A round that could not be judged (no first version, or no tasks): every task carries the reason."""
    reason = "; ".join(errors)
    outcomes = [TaskOutcome(task_id=t.id, solvable=False, checker_valid=False, reason=reason) for t in tasks]
    return AppRoundResult(app_id=app_id, domain=domain, coder=coder, cua=cua, mode=mode, round=round_,
                          html=version.path if version else "", html_sha=version.sha if version else "",
                          tasks=outcomes, offline_roles=_offline_roles(config, coder, cua), errors=list(errors))


def _track(coder: str, cua: str, mode: str) -> str:
    return f"{coder}/{cua}/{mode}".replace(":", "-")


async def _roll_out_round(config, stages: Stages, run_key, run_dir, app_id, round_, version: VersionRef, tasks, valid,
                          checker_by_task, cua, models) -> dict[str, RolloutRef]:
    # The stage takes a browser slot only around its browser work (`use_browser_slots`), so
    # Prefect's bookkeeping of one rollout overlaps the browser work of others.
    use_browser_slots(config.concurrency)
    version_dir = Path(version.path).parent

    async def one(task: Task) -> tuple[str, RolloutRef]:
        out_path = str(version_dir / "rollouts" / cua / task.id)
        # A track waiting for another's identical rollout (round 0 is shared) gets its cached result.
        async with _one_at_a_time("rollout", run_dir, out_path):
            ref = await stages.rollout(run_key, run_dir, app_id, round_, task.id, task.description, task.expected_outcome,
                                       checker_by_task[task.id], version.path, version.sha, cua, config.cua_model,
                                       config.max_steps, models, out_path)
            return task.id, ref

    pairs = await asyncio.gather(*(one(t) for t in tasks if valid.get(t.id)))
    return dict(pairs)


def _round_result(config, app_id, domain, coder, cua, mode, round_, version: VersionRef, tasks, verdicts, rollouts,
                  errors: list[str] | None = None, verify_error: str | None = None) -> AppRoundResult:
    """`verdicts` is None when verification failed: every task then carries `verify_error`."""
    valid = verdicts.valid if verdicts is not None else {}
    reasons = verdicts.reasons if verdicts is not None else {t.id: verify_error for t in tasks}
    outcomes = []
    for task in tasks:
        ref = rollouts.get(task.id)
        outcomes.append(TaskOutcome(
            task_id=task.id,
            solvable=valid.get(task.id, False),
            checker_valid=valid.get(task.id, False),
            success=bool(ref and ref.success),
            termination=ref.termination if ref else None,
            steps=ref.steps if ref else 0,
            trajectory=ref.trajectory if ref else None,
            dashboard=ref.dashboard if ref else None,
            reason=(ref.error if ref else reasons.get(task.id)) or None,
        ))
    screenshot = None
    initial = [r for r in rollouts.values() if r.trajectory]
    if initial:
        candidate = Path(initial[0].trajectory) / "step_000.png"
        if (Path(config.run_dir) / candidate).exists():
            screenshot = str(candidate)
    return AppRoundResult(app_id=app_id, domain=domain, coder=coder, cua=cua, mode=mode, round=round_,
                          html=version.path, html_sha=version.sha, screenshot=screenshot, tasks=outcomes,
                          contract=version.contract, offline_roles=_offline_roles(config, coder, cua),
                          errors=list(errors or []))


def _offline_roles(config: ExperimentConfig, coder: str, cua: str) -> list[str]:
    offline_roles = [role for role, name in (("coder", coder), ("verifier", config.verifier), ("proposer", config.proposer),
                                             ("commenter", config.commenter)) if name == "offline"]
    if cua == "heuristic":
        offline_roles.append("cua")
    return offline_roles


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
