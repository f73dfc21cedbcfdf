"""`aui export RUN_DIR [RUN_DIR …] --out DIR`: finished runs written as a dataset (`results.export_dataset`).

Steps, tasks and revisions as Parquet tables in Hugging Face's folder convention, with a dataset card; the
command only reads the run folders, checks its flags and prints what it wrote.
"""

from __future__ import annotations

from pathlib import Path

import typer

from results import ExportError, export_dataset

from ._output import console, exit_on


def export_command(
    run_dirs: list[Path] = typer.Argument(..., help="Finished run folders (each holds results.json and manifest.json)."),
    out: Path = typer.Option(..., "--out", help="The dataset folder to write (must not exist or be empty)."),
    force: bool = typer.Option(False, "--force", help="Replace a non-empty --out (only once the new dataset is "
                               "complete)."),
    license: str = typer.Option(None, "--license", help="The dataset's licence for the card's header, e.g. mit or "
                                "cc-by-4.0 (default: other — the project states none; the card lists the inputs')."),
    batch_rows: int = typer.Option(100, "--batch-rows", min=1, help="Rows per Parquet row group (also flushed at "
                                   "64 MB)."),
) -> None:
    """Runs out as a dataset: steps (screenshot, action as JSON / UI-TARS / computer use, reward), tasks, revisions."""
    with exit_on(ExportError):
        report = export_dataset(run_dirs, out, batch_rows=batch_rows, license=license, force=force)
    rows = report.rows
    console.print(f"{rows['steps']:,} steps of {report.episodes:,} rollouts, {rows['tasks']:,} task rows, "
                  f"{rows['revisions']:,} revision(s) from {len(report.runs)} run(s) → {report.out} "
                  f"({report.bytes / 1e6:.1f} MB, {report.seconds:.1f} s)", soft_wrap=True)
    for run, roles in report.offline_roles.items():
        if roles:
            console.print(f"{run}: offline providers played {', '.join(roles)} — the card says so", soft_wrap=True)
    folders = {folder.resolve().name: folder for folder in run_dirs}
    for run in report.changes_missing:
        console.print(f"[yellow]{run}: no insights.json, so the revisions' change log is null — `aui insights "
                      f"{folders.get(run, run)}` first includes it[/]", soft_wrap=True)
    console.print(f"dataset card: {Path(report.out) / 'README.md'}")
