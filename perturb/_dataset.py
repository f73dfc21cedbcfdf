"""A defect set's labelled tuples: each proven defect rolled out, beside the same task on the defect-free app.

For every proven defect the task's reference solution is carried out by pointer and keys
(`SolutionPolicy`) on the defect app, and once per task on the defect-free app; each trajectory
writes its `tuples.jsonl` (`cua.write_tuples`). The defect app's tuples are labelled by the rule
of `cua.transition_tuples` (defective when the step acted on the bound element); the defect-free
app's are all "none" — it is the version the defect was injected into, taken as defect-free.
Together they are the dataset a detector is scored on (GTArena's tuples with and without defects).

    <run>/dataset/<app>/<task>/clean/            trajectory.json, step PNGs, tuples.jsonl
    <run>/dataset/<app>/<task>/<type>-s<seed>/   the same on the defect app
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path

from pydantic import BaseModel

from apps_prompts import AppSpec
from cua import BrowserConfig, RolloutConfig, Trajectory, TUPLES_FILE, clear_rollout, rollout, write_tuples
from verifier import rollout_checker

from ._inject import DefectRecord, DefectSet
from ._solution_policy import SolutionPolicy

DATASET_DIR = "dataset"
CLEAN = "clean"
ROLLOUT_CONCURRENCY = 2
DATASET_SEED = 0  # the apps' Math.random and clock are fixed, so both versions start from the same page


class DatasetTrajectory(BaseModel):
    """One trajectory of the dataset: where it is (relative to the run folder) and what it was rolled out on."""

    folder: str
    app_id: str
    task_id: str
    defect_id: str | None = None
    """The defect's id in the set; None for the defect-free app."""


def dataset_folder(record: DefectRecord | None, app_id: str = "", task_id: str = "") -> Path:
    """Where a defect's (or, with None, a task's defect-free) trajectory lives, relative to the run folder."""
    if record is None:
        return Path(DATASET_DIR, app_id, task_id, CLEAN)
    return Path(DATASET_DIR, record.app_id, record.task_id or "-", f"{record.type}-s{record.seed}")


def dataset_trajectories(defect_set: DefectSet) -> list[DatasetTrajectory]:
    """The dataset's trajectories in a fixed order: per proven defect's task, the defect-free one, then its defects."""
    found: list[DatasetTrajectory] = []
    seen: set[tuple[str, str]] = set()
    for record in defect_set.proven:
        key = (record.app_id, record.task_id or "-")
        if key not in seen:
            seen.add(key)
            found.append(DatasetTrajectory(folder=str(dataset_folder(None, *key)), app_id=key[0], task_id=key[1]))
        found.append(DatasetTrajectory(folder=str(dataset_folder(record)), app_id=record.app_id,
                                       task_id=record.task_id or "-", defect_id=record.id))
    return found


DATASET_SHORT_TIMERS_MS = 3_000
"""A timer of up to 3 s is an action's pending effect (memory-garden's board lock is 1 s, up to 3 s as set)."""


async def roll_out_dataset(run_dir: Path | str, defect_set: DefectSet, apps: Mapping[str, tuple[AppSpec, str]],
                           config: BrowserConfig | None = None,
                           concurrency: int = ROLLOUT_CONCURRENCY) -> list[DatasetTrajectory]:
    """Roll out every proven defect and its task's defect-free counterpart into `run_dir`, with tuples.

    A trajectory already there that ended and was made under the same transform is kept (a re-run
    resumes); any other is rolled out again in place of it. Returns the dataset's trajectories
    (`dataset_trajectories`).
    """
    run_dir = Path(run_dir)
    config = config or BrowserConfig()
    slots = asyncio.Semaphore(max(1, concurrency))
    entries = dataset_trajectories(defect_set)

    async def one(entry: DatasetTrajectory) -> None:
        spec, html = apps[entry.app_id]
        task = spec.task(entry.task_id)
        record = defect_set.record(entry.defect_id) if entry.defect_id else None
        transform = record.transform_object() if record else None
        folder = run_dir / entry.folder
        if _done(folder, transform.sha256 if transform else None):
            return
        clear_rollout(folder)  # what a cut-short attempt left: a shorter new one would leave its screenshots beside
        # the app's own short timers are waited out after every step, so the dataset repeats (`cua._timers`)
        browser = config.model_copy(update={"transform": transform, "short_timers_ms": DATASET_SHORT_TIMERS_MS})
        # every step of the solution is taken, whatever it changed: a defect that swallows a click
        # must not end the rollout early as "stuck"
        rollout_config = RolloutConfig(max_steps=4 * len(task.solution) + 4, browser=browser, stuck_no_change_steps=0,
                                       stuck_repeat_steps=0)
        async with slots:
            trajectory = await rollout(html, task.description, SolutionPolicy(task.solution), rollout_checker(task.checker),
                                       folder, rollout_config, app_id=spec.id, task_id=task.id,
                                       expected_outcome=task.expected_outcome, seed=DATASET_SEED, fixed_clock=True)
        write_tuples(trajectory, folder, known=True)

    await asyncio.gather(*(one(entry) for entry in entries))
    return entries


def _done(folder: Path, transform_sha: str | None) -> bool:
    try:
        trajectory = Trajectory.load(folder)
    except (FileNotFoundError, ValueError):
        return False
    return trajectory.finished and trajectory.transform_sha256 == transform_sha and (folder / TUPLES_FILE).is_file()
