"""The design loop and the sweep, as Prefect flows that read like the paper's Figure 4.

    v0 = generate(app)            tasks = propose(app)
    for round in 0..R:
        verdicts = verify(v, tasks)                        → FC
        trajectories = roll out every task with a checker  → SR, dashboards
        if round < R: feedback = comment(failed dashboards); v = revise(v, mode, feedback, verdicts)

Rollouts of a round run concurrently on this process's one browser, bounded by a semaphore
(design.md §5); every stage is a cached Prefect task, so a re-run resumes where it stopped.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import uuid
from pathlib import Path

from prefect import flow, get_run_logger
from prefect.artifacts import acreate_markdown_artifact, acreate_progress_artifact, acreate_table_artifact, aupdate_progress_artifact

from apps_prompts import Task, load_apps

from ._config import ExperimentConfig
from ._results import DOMAINS, AppRoundResult, TaskOutcome, table_rows
from ._revision import comment_failures, revise_version
from ._stages import RolloutRef, VersionRef, generate_initial, propose_tasks, rollout_task, verify_version

_rollout_gates: dict[int, asyncio.Semaphore] = {}


def _rollout_gate(limit: int) -> asyncio.Semaphore:
    """One semaphore per event loop bounds all rollouts in flight, across apps and tracks."""
    return _rollout_gates.setdefault(id(asyncio.get_running_loop()), asyncio.Semaphore(limit))


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


def _artifact_key(*parts: object) -> str:
    text = "-".join(str(p) for p in parts).lower()
    return "".join(c if c.isalnum() else "-" for c in text).strip("-")[:200]


@flow(name="design-loop", flow_run_name="{app_id} · {coder} · {cua} · {mode}")
async def design_loop(config: ExperimentConfig, app_id: str, coder: str, cua: str, mode: str, run_key: str) -> list[AppRoundResult]:
    """One app through R rounds of judge-and-revise with one coder, one CUA and one revision mode."""
    logger = get_run_logger()
    run_dir = str(config.run_dir.resolve())
    apps, models = str(config.apps), str(config.models_config) if config.models_config else None
    async with _one_at_a_time("generate", run_dir, app_id, coder):
        version = await generate_initial(run_key, run_dir, apps, app_id, coder, models,
                                         str(config.v0_dir) if config.v0_dir else None)
    async with _one_at_a_time("propose", run_dir, app_id, config.proposer):
        tasks_ref = await propose_tasks(run_key, run_dir, apps, app_id, config.proposer,
                                        str(config.tasks_file) if config.tasks_file else None, config.tasks_per_app, models)
    tasks = [Task.model_validate(t) for t in json.loads((Path(run_dir) / tasks_ref.path).read_text())]
    domain = next(a.domain.value for a in load_apps(config.apps).apps if a.id == app_id)
    results: list[AppRoundResult] = []
    for round_ in range(config.rounds + 1):
        async with _one_at_a_time("verify", run_dir, version.path, config.verifier):
            verdicts = await verify_version(run_key, run_dir, apps, app_id, round_, version.path, version.sha,
                                            tasks_ref.path, tasks_ref.sha, config.verifier, models)
        checkers = json.loads((Path(run_dir) / verdicts.path).read_text())
        checker_by_task = {v["task_id"]: v.get("checker") for v in checkers["verdicts"]}
        rollouts = await _roll_out_round(config, run_key, run_dir, app_id, round_, version, tasks, verdicts.valid,
                                         checker_by_task, cua, coder, mode, models)
        result = _round_result(config, app_id, domain, coder, cua, mode, round_, version, tasks, verdicts, rollouts)
        results.append(result)
        logger.info("%s round %d: FC %.1f%% SR %.1f%%", app_id, round_, 100 * result.fc, 100 * result.sr)
        await _publish_round(config, result)
        if round_ == config.rounds:
            break
        feedback = await comment_failures(run_key, run_dir, app_id, round_, mode, version.path, version.sha,
                                          [r.trajectory for r in rollouts.values() if not r.success],
                                          config.commenter, config.commenter_mode, models, _track(coder, cua, mode))
        version = await revise_version(run_key, run_dir, apps, app_id, round_ + 1, mode, version.path, version.sha,
                                       verdicts.path, verdicts.sha, tasks_ref.path, feedback.path if feedback else None,
                                       feedback.sha if feedback else None, coder, config.style_block,
                                       str(config.v0_dir) if config.v0_dir else None, models, _track(coder, cua, mode))
    return results


def _track(coder: str, cua: str, mode: str) -> str:
    return f"{coder}/{cua}/{mode}".replace(":", "-")


async def _roll_out_round(config, run_key, run_dir, app_id, round_, version: VersionRef, tasks, valid, checker_by_task,
                          cua, coder, mode, models) -> dict[str, RolloutRef]:
    gate = _rollout_gate(config.concurrency)
    version_dir = Path(version.path).parent
    track = Path("rollouts", cua)

    async def one(task: Task) -> tuple[str, RolloutRef]:
        out_path = str(version_dir / track / task.id)
        # The folder's lock first, then a browser slot: a track waiting for another's identical
        # rollout (round 0 is shared) holds no slot meanwhile.
        async with _one_at_a_time("rollout", run_dir, out_path), gate:
            ref = await rollout_task(run_key, run_dir, app_id, round_, task.id, task.description, task.expected_outcome,
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


async def _publish_round(config: ExperimentConfig, result: AppRoundResult) -> None:
    """A table artifact for this app's round (FC/SR) and a markdown summary with dashboard links."""
    base = config.serve_url.rstrip("/")
    rows = [{"task": t.task_id, "checker": "valid" if t.checker_valid else "none", "success": t.success,
             "termination": t.termination or "", "steps": t.steps} for t in result.tasks]
    await acreate_table_artifact(
        table=rows,
        key=_artifact_key(result.app_id, result.coder, result.cua, result.mode, "round", result.round),
        description=f"**{result.app_id}** round {result.round}: FC {100 * result.fc:.1f}% · SR {100 * result.sr:.1f}%",
    )
    lines = [f"### {result.app_id} — round {result.round} ({result.coder} · {result.cua} · {result.mode})",
             f"FC **{100 * result.fc:.1f}%** · SR **{100 * result.sr:.1f}%** · [app version]({base}/{result.html})", ""]
    if result.screenshot:
        lines.append(f"![{result.app_id} round {result.round}]({base}/{result.screenshot})")
    for task in result.tasks:
        if task.dashboard and not task.success:
            lines.append(f"- `{task.task_id}` {task.termination}: [dashboard]({base}/{task.dashboard})")
    await acreate_markdown_artifact(markdown="\n".join(lines),
                                    key=_artifact_key("summary", result.app_id, result.coder, result.cua, result.mode, result.round))


@flow(name="aui-sweep", flow_run_name="sweep {config.name}")
async def sweep(config: ExperimentConfig) -> list[AppRoundResult]:
    """apps × coders × CUA policies × revision modes, each through `design_loop`; then results and report."""
    from ._finish import finish_run, write_manifest

    run_dir = config.run_dir.resolve()
    run_key = run_key_for(run_dir)
    write_manifest(config, run_dir)
    specs = load_apps(config.apps).raise_for_errors()
    app_ids = config.app_ids or [s.id for s in specs]
    unknown = sorted(set(app_ids) - {s.id for s in specs})
    if unknown:
        raise ValueError(f"unknown app id(s) {unknown} in {config.apps}")
    tracks = list(itertools.product(app_ids, config.coders, config.cua_policies, config.revision_modes))
    progress_id = await acreate_progress_artifact(progress=0.0, key=_artifact_key("progress", config.name),
                                                  description=f"{len(tracks)} app tracks × {config.rounds + 1} rounds")
    done = 0
    track_gate = asyncio.Semaphore(max(2, config.concurrency))

    async def run_track(app_id, coder, cua, mode) -> list[AppRoundResult]:
        nonlocal done
        async with track_gate:
            results = await design_loop(config, app_id, coder, cua, mode, run_key)
        done += 1
        await aupdate_progress_artifact(progress_id, progress=100.0 * done / len(tracks))
        return results

    nested = await asyncio.gather(*(run_track(*t) for t in tracks))
    results = [r for track in nested for r in track]
    rows = table_rows(results)
    domains = [d for d in DOMAINS if any(r.tasks.get(d) for r in rows)] + ["overall"]  # no all-empty columns
    for round_ in sorted({r.round for r in rows}):
        await acreate_table_artifact(
            table=[{"coder": r.coder, "cua": r.cua, "mode": r.mode, **{f"FC {d}": _pct(r.fc[d]) for d in domains},
                    **{f"SR {d}": _pct(r.sr[d]) for d in domains}} for r in rows if r.round == round_],
            key=_artifact_key("fc-sr", config.name, "round", round_),
            description=f"FC and SR per domain, round {round_} ({config.name})",
        )
    finish_run(config, run_dir, results)
    return results


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.1f}"
