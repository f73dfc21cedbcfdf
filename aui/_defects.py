"""`aui defects inject | eval`: GUI defects the GTArena way; thin wrappers over `flows._defects`.

Registered in `aui/_app.py` with `app.add_typer(defects_app, name="defects")`.
"""

from __future__ import annotations

from pathlib import Path

import typer

from commenter.detector import REFERENCE_NOTE, percent
from cua import Viewport
from experiment import is_offline_provider
from flows import DefectRunError, eval_run, inject_run
from llm import ModelClient, ModelConfigError, UnknownNameError
from perturb import DefectError

from ._options import APP_IDS, DEFECT_SPECS, MODELS_REGISTRY, VIEWPORT, comma_list, judged_at_once
from ._output import _fail, closing, console, exit_on, failed, in_browser

defects_app = typer.Typer(help="GUI defects (GTArena's taxonomy): inject proven defects, score detectors on tuples.",
                          no_args_is_help=True)


DEFAULT_DETECTORS = "offline,offline-blind"
"""The offline rules twice: compared with the defect-free app (reference-assisted), and blind (like for like with
GTArena's detectors, which see only the app under test)."""


@defects_app.command("inject")
def inject_command(
    out: Path = typer.Option(..., "--out", help="The run folder to write the defect set (defects.json) and dataset into "
                             "(the same set again resumes; a different one removes the earlier set's dataset, app versions, detections and "
                             "metrics; report.html stays until `defects eval` writes it again)."),
    app_ids: list[str] = APP_IDS,
    types: str = typer.Option(None, "--types", help="Defect types, comma-separated (default: every implemented type)."),
    per_app: int = typer.Option(1, "--per-app", min=1, help="Defects per app and type (seeds --seed … --seed+K-1)."),
    seed: int = typer.Option(0, "--seed", help="The first seed."),
    apps: Path = DEFECT_SPECS,
    viewport: Viewport = VIEWPORT,
    rollouts: bool = typer.Option(True, "--rollouts/--no-rollouts", help="Also roll out the labelled dataset "
                                  "(each proven defect and its task on the defect-free app, with tuples.jsonl)."),
) -> None:
    """Inject defects into apps, prove each on the page, and write the defect set (and its labelled tuples)."""
    if types is not None and not comma_list(types):
        raise _fail(f"--types {types!r}: name at least one defect type")
    try:
        defect_set = in_browser(inject_run(out, apps_path=apps, app_ids=app_ids or None, types=comma_list(types) or None,
                                           per_app=per_app, seed=seed, viewport=viewport, rollouts=rollouts))
    except (DefectRunError, DefectError, KeyError, ValueError, FileNotFoundError) as exc:
        raise failed(exc)
    proven = len(defect_set.proven)
    console.print(f"{proven} / {len(defect_set.records)} defects proven ({', '.join(defect_set.types)}) in "
                  f"{len(defect_set.apps)} app(s) → {out / 'defects.json'}", soft_wrap=True)
    for record in defect_set.records:
        if not record.proven:
            console.print(f"  dropped {record.id}: {record.reason}", soft_wrap=True, highlight=False)


@defects_app.command("eval")
def eval_command(
    run_dir: Path = typer.Argument(..., help="A defect run folder (made by `aui defects inject`)."),
    detector: str = typer.Option(DEFAULT_DETECTORS, "--detector", help="Detectors, comma-separated: offline (rules on "
                                 "measured facts, reference-assisted: compared with the defect-free app), "
                                 "offline-blind (the same rules without it), commenter (the offline commenter's "
                                 "findings), or a model role or name (e.g. detector)."),
    models_config: Path = MODELS_REGISTRY,
    concurrency: int = judged_at_once(2),
) -> None:
    """Score detectors on a defect run's tuples: Accuracy, Recall-D, Recall-N, per type and kind; report.html."""
    names = comma_list(detector)
    if not names:
        raise _fail("--detector: name at least one detector")
    client = None
    for name in names:
        if is_offline_provider("detector", name):  # the detector's own rules: no model client
            continue
        with exit_on(UnknownNameError, ModelConfigError, ValueError, offline="--detector offline"):
            client = client or ModelClient(models_config)
            client.registry.get(name).check_usable()  # a key variable unset: named now, not once per tuple
    with exit_on(FileNotFoundError, DefectRunError, ValueError):
        scored = in_browser(closing(client, _eval(run_dir, names, client, concurrency)))
    for metrics in scored:
        overall = metrics.overall
        console.print(f"{metrics.label}: {overall.tuples} tuples ({overall.defective} defective, {overall.normal} normal, "
                      f"{overall.errors} errors) — Accuracy {percent(overall.accuracy)}, Recall-D "
                      f"{percent(overall.recall_d)}, Recall-N {percent(overall.recall_n)} → {run_dir / 'report.html'}",
                      soft_wrap=True)
        if metrics.reference_assisted:
            console.print(f"  {REFERENCE_NOTE}", soft_wrap=True)
        for kind, rates in metrics.by_kind.items():
            console.print(f"  {kind}: Recall-D {percent(rates.recall_d)}, type right {percent(rates.type_accuracy)}",
                          soft_wrap=True)
    if any(m.overall.tuples and m.overall.errors == m.overall.tuples for m in scored):  # one answered nothing
        raise typer.Exit(1)


async def _eval(run_dir, detectors, client, concurrency):
    return [await eval_run(run_dir, name, client, concurrency=concurrency) for name in detectors]
