"""Ablations: a revision made again without one principle's changes (or one change), rolled out on the same tasks.

Where `insights` can only say a principle's changes were *associated* with tasks flipping, an
ablation measures cause: for every revision of a finished run that applied the principle (the change
log's decision, `insights.principle_status`, which the principle table's revisions read too), the same
coder revises the same version from the same feedback with that principle left out (the offline
coder skips its transforms; any coder gets the feedback without the lines that ask for it), the new
version is verified and its tasks rolled out like the full one's, and the paired difference over the
tasks with a valid checker on both versions is SR(ablated) − SR(full), with Newcombe's 95 % interval
and McNemar's exact p. It lives in `<run>/ablations/<name>/`, a small run of its own whose stages are
cached like every other (a re-run of the same ablation reuses them).
"""

from __future__ import annotations

import json
from pathlib import Path

from prefect import flow

from coder import Regression, principle_of
from experiment import ConfigError, ExperimentConfig, Plan, check_config, make_config
from insights import Renderer, Revision, principle_changes, principle_status, revised_pairs, revisions
from results import (
    ABLATION_FILE,
    AblatedRevision,
    Ablation,
    AppRoundResult,
    Change,
    mcnemar_exact_p,
    paired_difference_interval,
    read_manifest,
    read_results,
    rounded,
)

from ._budget import read_json_object, run_budget
from ._cache import reset_tally
from ._dask import with_task_runner
from ._loop import prefect_stages
from ._refs import FileRef, RunContext, TasksRef, VersionRef
from ._round_result import regression
from ._stages import slug
from ._sweep import run_context, run_key_for
from ._track import PLAIN_STAGES, Stages, TrackSteps


def ablation_name(principle: str | None, change: str | None) -> str:
    """The ablation's folder name under `<run>/ablations/`."""
    return slug(principle or (change or "").replace("/", "_").replace(" · ", "-"))


def _config_of(run_dir: Path) -> ExperimentConfig:
    manifest = read_manifest(run_dir)
    if not manifest or "config" not in manifest:
        raise ConfigError(f"{run_dir / 'manifest.json'}: no recorded config (not a finished run of this tool)")
    return make_config(manifest["config"], source=str(run_dir / "manifest.json"))


def _selected(revision: Revision, principle: str | None, change: str | None) -> tuple[list[Change], str | None]:
    """The changes that select `revision` for the ablation — those of the principle (or the one change) the change
    log found applied — or, when there are none, why the revision is skipped."""
    left_out = principle or change
    if principle is not None:
        mine, status = principle_changes(revision, principle), principle_status(revision, principle)
    else:
        mine = [c for c in revision.changes if c.id == change]
        status = mine[0].status if mine else None
    if status == "applied":
        return [c for c in mine if c.applied], None
    if status is None:
        return [], f"nothing of {left_out} was applied"
    return [], f"{left_out} {status} by the change log: " + "; ".join(
        f"{c.transform or c.id.rsplit('/', 1)[1]}: {c.how}" for c in mine)[:300]


def _left_out(revision: dict, feedback: dict, principle: str | None, change: str | None,
              changes: list[Change]) -> tuple[list[str], list[str], list[str]]:
    """(what is left out, transforms to omit, feedback lines to drop) for one revision; what the change log (`changes`)
    did not find applied says so."""
    transforms = [t for t in revision.get("transforms") or [] if int(t.get("changes") or 0) > 0]
    lines = list(feedback.get("actionable_changes") or [])
    if principle is not None:
        omit = [t["name"] for t in transforms if t.get("principle") == principle]
        drop = [line for line in lines if principle_of(line) == principle]
    else:
        kind, _, name = (change or "").rpartition("/")[2].partition("-")
        omit = [t["name"] for t in transforms if kind == "made" and t["name"] == name]
        drop = [lines[int(name) - 1]] if kind == "asked" and name.isdigit() and 0 < int(name) <= len(lines) else []
    status = {**{c.text: c.status for c in changes if c.kind == "asked"},
              **{c.transform: c.status for c in changes if c.transform}}

    def said(what: str, key: str) -> str:
        return what if status.get(key, "applied") == "applied" else f"{what} (change log: {status[key]})"

    return ([*(said(f"transform {name}", name) for name in omit), *(said(f"asked: {line}", line) for line in drop)],
            omit, drop)


async def ablate_run(run_dir: Path, *, principle: str | None = None, change: str | None = None,
                     stages: Stages = PLAIN_STAGES) -> Ablation:
    """Ablate `principle` (or the change with id `change`) in every revision of the run the change log finds it applied
    in (`insights.principle_status`; both versions loaded in Chromium to decide); the others are `skipped`, with why.

    Raises:
        ConfigError: neither or both of principle and change, or the run folder has no recorded config.
        ValueError: no change of the run has the id `change`.
    """
    if (principle is None) == (change is None):
        raise ConfigError("ablate: give exactly one of --principle and --change")
    run_dir = Path(run_dir).resolve()
    config = _config_of(run_dir)
    name = ablation_name(principle, change)
    folder = run_dir / "ablations" / name
    results = read_results(run_dir).apps
    pairs = [(after, before) for after, before in revised_pairs(results)
             if change is None or change.startswith(f"{after.app_id}/{after.track}/r{after.round}/")]
    decided = await revisions(run_dir, results, Renderer(config.viewport), pairs)  # the change log's decisions
    if change is not None and not any(c.id == change for revision in decided for c in revision.changes):
        raise ValueError(f"--change {change!r}: no change of this run has that id (insights.json lists them: "
                         f"`aui insights {run_dir}`)")
    sub = run_context(config, folder, run_key=f"{run_key_for(run_dir)}-ablation-{name}")
    ablation = Ablation(run=str(run_dir), principle=principle, change=change, folder=str(folder),
                        offline=bool((read_manifest(run_dir) or {}).get("offline")))
    plan = check_config(config, probe_endpoints=False)
    async with run_budget(config.budget, folder, sub.run_key):
        for revision in decided:
            made = await _ablate_one(run_dir, sub, (config, plan), stages, revision, principle, change, ablation)
            if made is not None:
                ablation.revisions.append(made)
    _pool(ablation)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / ABLATION_FILE).write_text(ablation.model_dump_json(indent=1), encoding="utf-8")
    return ablation


async def _ablate_one(run_dir: Path, sub: RunContext, planned: tuple[ExperimentConfig, Plan], stages: Stages,
                      decided: Revision, principle: str | None, change: str | None,
                      ablation: Ablation) -> AblatedRevision | None:
    (config, plan), after, before = planned, decided.result, decided.before
    track = after.track
    where = f"{after.app_id} · {track} · round {after.round}"
    selected, why_not = _selected(decided, principle, change)
    if why_not is not None:
        ablation.skipped.append(f"{where}: {why_not}")
        return None
    revision = read_json_object(run_dir / Path(after.html).parent / "revision.json")
    feedback_path = Path("apps", after.app_id, *track.folder.parts, f"feedback-round-{before.round}.json")
    feedback = read_json_object(run_dir / feedback_path)
    left_out, omit, drop = _left_out(revision, feedback, principle, change, decided.changes)
    if not left_out:
        ablation.skipped.append(f"{where}: applied, but nothing of {principle or change} can be left out of the "
                                "coder's input (a change nobody asked for)")
        return None

    def copy(relative: Path | str) -> FileRef:
        return sub.write(Path(relative), (run_dir / relative).read_bytes())

    html = copy(before.html)
    verdicts = copy(Path(before.html).parent / "verdicts.json")
    tasks_file = copy(Path("apps", after.app_id, f"tasks-{slug(config.proposer)}.json"))
    kept = {**feedback, "actionable_changes": [line for line in feedback.get("actionable_changes") or []
                                               if line not in drop]}
    feedback_ref = sub.write(feedback_path, json.dumps(kept, indent=1).encode()) if feedback else None
    steps = TrackSteps(config, sub, after.app_id, track, stages, plan=plan)
    tasks = TasksRef(app_id=after.app_id, file=tasks_file, count=len(after.tasks), offline=True)
    version: VersionRef = await stages.revise(
        run=sub, app_id=after.app_id, round=after.round, html=html, verdicts=verdicts, tasks=tasks.file,
        feedback=feedback_ref, track=track, style_block=config.style_block,
        regressions=_regressions(before, after, steps.tasks(tasks)), viewport=config.viewport,
        coder=plan.provider("coder", track.coder),
        omit_principles=[principle] if principle and omit else None, omit_transforms=omit if change else None)
    verified = await steps.verify(version, tasks)
    rollouts = await steps.roll_out(version, tasks, verified)
    ablated = steps.record(version, tasks, verified, rollouts)
    full = {t.task_id: t for t in after.tasks}
    pairs = [(full[t.task_id].passed, t.passed) for t in ablated.tasks
             if t.task_id in full and full[t.task_id].checker_valid and t.checker_valid]
    ablation.both += sum(f and a for f, a in pairs)
    ablation.full_only += sum(f and not a for f, a in pairs)
    ablation.ablated_only += sum(a and not f for f, a in pairs)
    ablation.neither += sum(not f and not a for f, a in pairs)
    return AblatedRevision(app_id=after.app_id, track=str(track), round=after.round, left_out=left_out,
                           changes=[c.id for c in selected], html=version.html.path, tasks=len(pairs),
                           full_sr=sum(f for f, _ in pairs) / len(pairs) if pairs else None,
                           ablated_sr=sum(a for _, a in pairs) / len(pairs) if pairs else None)


def _pool(ablation: Ablation) -> None:
    n = ablation.both + ablation.full_only + ablation.ablated_only + ablation.neither
    ablation.tasks = n
    if not n:
        return
    ablation.full_sr = (ablation.both + ablation.full_only) / n
    ablation.ablated_sr = (ablation.both + ablation.ablated_only) / n
    ablation.paired_diff = (ablation.ablated_only - ablation.full_only) / n
    ablation.ci95 = rounded(paired_difference_interval(ablation.both, ablation.ablated_only, ablation.full_only,
                                                       ablation.neither))
    ablation.mcnemar_p = round(mcnemar_exact_p(ablation.ablated_only, ablation.full_only), 6)


def _regressions(before: AppRoundResult, after: AppRoundResult, tasks) -> list[Regression]:
    """The regressions the original revision was given: the revised round's, as the loop told them (a task's
    outcome with a trajectory is its rollout's end; its `reason` then is the rollout's error)."""
    descriptions = {task.id: task.description for task in tasks}
    ran = {t.task_id: t for t in before.tasks if t.trajectory}
    return [regression(task_id, descriptions.get(task_id, ""),
                       (ran[task_id].termination, ran[task_id].steps, ran[task_id].reason) if task_id in ran else None)
            for task_id in before.regressions]


@flow(name="aui-ablate", flow_run_name="ablate {run_dir}")
async def ablate(run_dir: str, principle: str | None = None, change: str | None = None) -> Ablation:
    """`ablate_run` with the Prefect stages, as the run's sweep ran them (cached, retried, on Dask when its config
    says so); the ablation records how many stage runs ran and how many came from the cache."""
    config = _config_of(Path(run_dir))
    folder = Path(run_dir).resolve() / "ablations" / ablation_name(principle, change)
    tally = reset_tally(folder)
    ablation = await ablate_run(Path(run_dir), principle=principle, change=change, stages=prefect_stages(config, tally))
    ablation.cache = tally.as_dict()
    (folder / ABLATION_FILE).write_text(ablation.model_dump_json(indent=1), encoding="utf-8")
    return ablation


def ablation_flow(run_dir: Path):
    """The `ablate` flow on the task runner of the run's config (Dask's, when the sweep ran on Dask)."""
    return with_task_runner(ablate, _config_of(Path(run_dir)))
