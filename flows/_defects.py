"""Defect runs (GTArena's way): inject proven defects into apps, roll them out, score detectors on the tuples.

    defect_set = await inject_run(run_dir, app_ids=["unit-converter"], types=None, per_app=2)
    metrics = await eval_run(run_dir, "offline")          # or "offline-blind", "commenter", a model role / name

A defect run folder holds:

    defects.json                      the defect set (`perturb.DefectSet`; the same inputs give the same bytes)
    apps/<app>/index.html             the app versions the defects were injected into
    dataset/<app>/<task>/…            the labelled trajectories and their tuples.jsonl (`perturb.roll_out_dataset`)
    detections-<detector>.jsonl       one answer per tuple (`commenter.detector.Detection`)
    defect-metrics-<detector>.json    Accuracy, Recall-D, Recall-N, per type and kind, the confusion matrix, and
                                      whether the detector compared with the defect-free app (reference_assisted)
    report.html                       the set and every detector's figures
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from contextlib import suppress
from pathlib import Path

from apps_prompts import BUNDLED_DIR, AppSpec, load_apps, reference_html_path
from commenter.detector import (
    DETECTIONS_FILE,
    METRICS_FILE,
    TrajectoryInput,
    detect_trajectories,
    get_detector,
    metrics_path,
    reference_assisted,
    score_detections,
    write_detections,
)
from cua import DEFAULT_VIEWPORT, BrowserConfig, Trajectory, Viewport, clear_rollout, write_atomic
from perturb import DefectSet, dataset_trajectories, inject_defects, roll_out_dataset
from results import write_defects_report

APPS_DIR = "apps"


class DefectRunError(ValueError):
    """A defect run cannot start or be read: the message names the app, file or field."""


def _apps(apps_path: Path | str, app_ids: Sequence[str] | None) -> list[tuple[AppSpec, str]]:
    specs = load_apps(apps_path).raise_for_errors()
    known = {spec.id: spec for spec in specs}
    chosen = list(app_ids) if app_ids else sorted(known)
    unknown = [app_id for app_id in chosen if app_id not in known]
    if unknown:
        raise DefectRunError(f"--app: no app {', '.join(map(repr, unknown))} under {apps_path} "
                             f"(known: {', '.join(sorted(known))})")
    pairs = []
    for app_id in chosen:
        path = reference_html_path(known[app_id])
        if path is None or not path.is_file():
            raise DefectRunError(f"app {app_id!r}: no reference HTML to inject defects into")
        pairs.append((known[app_id], path.read_text(encoding="utf-8")))
    return pairs


async def inject_run(run_dir: Path | str, *, apps_path: Path | str = BUNDLED_DIR, app_ids: Sequence[str] | None = None,
                     types: Sequence[str] | None = None, per_app: int = 1, seed: int = 0,
                     viewport: Viewport = DEFAULT_VIEWPORT, rollouts: bool = True):
    """Plan, prove and write a defect set into `run_dir`; with `rollouts`, also its labelled dataset.

    The same set as the one already there is a re-run: its dataset resumes, the detectors' figures of it stay. A
    different one first removes the earlier set's files (`_remove_earlier_set`).

    Raises:
        DefectRunError: an unknown app or one without HTML. perturb.DefectError: an unknown type.
    """
    run_dir = Path(run_dir)
    pairs = _apps(apps_path, app_ids)
    earlier = None
    with suppress(FileNotFoundError, ValueError):  # none, or one that does not read: nothing of it is known to remove
        earlier = DefectSet.read(run_dir)
    config = BrowserConfig(viewport=viewport)
    defect_set = await inject_defects(pairs, types, per_app=per_app, seed=seed, config=config)
    if earlier is not None and earlier.model_dump(mode="json") != defect_set.model_dump(mode="json"):
        _remove_earlier_set(run_dir, earlier)
    for spec, html in pairs:
        write_atomic(run_dir / APPS_DIR / spec.id / "index.html", html.encode("utf-8"))
    defect_set.write(run_dir)
    if rollouts:
        await roll_out_dataset(run_dir, defect_set, {spec.id: (spec, html) for spec, html in pairs}, config=config)
    return defect_set


def _remove_earlier_set(run_dir: Path, earlier: DefectSet) -> None:
    """What an earlier, different defect set left in `run_dir`, which would sit beside the new one as if of it: its
    dataset's trajectories (all: one the new set names too may be of another app version), its app versions, the
    detectors' detections and metrics of it; folders this leaves empty go too. Anything else stays, and nothing
    outside `run_dir` is touched (a folder linked out of it is skipped)."""
    def inside(folders):
        return [folder for folder in folders if folder.resolve().is_relative_to(run_dir.resolve())]

    trajectories = inside(run_dir / entry.folder for entry in dataset_trajectories(earlier))
    versions = inside(run_dir / APPS_DIR / app_id for app_id in earlier.apps)
    for folder in trajectories:
        clear_rollout(folder)
    scores = [*run_dir.glob(DETECTIONS_FILE.format(name="*")), *run_dir.glob(METRICS_FILE.format(name="*"))]
    for path in [*scores, *(folder / "index.html" for folder in versions)]:
        path.unlink(missing_ok=True)
    for folder in [*trajectories, *versions]:
        with suppress(OSError):  # innermost first, up to the run folder, while empty
            for empty in [folder, *folder.parents[:len(folder.relative_to(run_dir).parts) - 1]]:
                empty.rmdir()


def app_html(run_dir: Path, app_id: str, sha256: str) -> str:
    """The app version a defect set was made on, from the run folder (its hash checked).

    Raises:
        DefectRunError: the file is missing or is not the version the set names.
    """
    path = run_dir / APPS_DIR / app_id / "index.html"
    if not path.is_file():
        raise DefectRunError(f"{path}: missing (the app version the defect set was injected into)")
    html = path.read_text(encoding="utf-8")
    if hashlib.sha256(html.encode("utf-8")).hexdigest() != sha256:
        raise DefectRunError(f"{path}: not the version defects.json names (html_sha256 {sha256[:12]}…)")
    return html


def dataset_inputs(run_dir: Path | str):
    """The defect run's trajectories as detector inputs: the app, its transform, the defect-free version, the task.

    The defect-free version is offered to every detector; only one that uses it (`offline`) is then
    reference-assisted, and its figures say so."""
    run_dir = Path(run_dir)
    defect_set = DefectSet.read(run_dir)
    shas = {record.app_id: record.html_sha256 for record in defect_set.records}
    htmls = {app_id: app_html(run_dir, app_id, sha) for app_id, sha in shas.items()}
    inputs = []
    for entry in dataset_trajectories(defect_set):
        folder = run_dir / entry.folder
        if not (folder / "tuples.jsonl").is_file():
            raise DefectRunError(f"{folder}: no tuples.jsonl (roll the dataset out: `aui defects inject` without "
                                 "--no-rollouts)")
        record = defect_set.record(entry.defect_id) if entry.defect_id else None
        html = htmls[entry.app_id]
        inputs.append(TrajectoryInput(folder=entry.folder, html=html,
                                      transform=record.transform_object() if record else None,
                                      reference_html=html, task=Trajectory.load(folder).task))
    return inputs


async def eval_run(run_dir: Path | str, detector: str = "offline", client=None, concurrency: int = 2):
    """Run `detector` on every tuple of a defect run, write its detections, metrics and the report; the metrics.

    Raises:
        FileNotFoundError / DefectRunError: the folder is not a defect run with its dataset.
        ValueError: a model detector without a client.
    """
    run_dir = Path(run_dir)
    inputs = dataset_inputs(run_dir)
    chosen = get_detector(detector, client)
    detections = await detect_trajectories(run_dir, inputs, chosen, concurrency=concurrency)
    write_detections(run_dir, chosen.name, detections)
    metrics = score_detections(chosen.name, detections, offline=chosen.offline,
                               reference_assisted=reference_assisted(chosen, inputs))
    write_atomic(metrics_path(run_dir, chosen.name), metrics.model_dump_json(indent=1).encode("utf-8"))
    write_defects_report(run_dir)
    return metrics
