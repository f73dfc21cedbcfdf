"""`aui insights RUN_DIR [RUN_DIR …]` and `aui insights ablate RUN_DIR --principle P | --change ID`.

The first prints the principle table of one or more finished runs (association: which principles' changes
touched the tasks that flipped) and writes insights.json; the second makes the run's revisions again with a
principle (or one change) left out, rolls the same tasks out and prints the paired difference (cause). Both
refresh the run's report.html, whose "Design insights" section shows them.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import typer
from rich.table import Table

from coder import PRINCIPLES
from insights import insights_of, write_insights
from results import (
    INSIGHTS_FILE,
    PRINCIPLE_COLUMNS,
    Ablation,
    Insights,
    interval_text,
    p_value,
    pct,
    principle_cells,
    read_results,
    table_rows,
    write_report,
)

from ._output import _fail, console, exit_on


def insights_command(
    targets: list[str] = typer.Argument(..., help="Finished run folders; or `ablate RUN_DIR` with --principle or "
                                        "--change to leave that out of the run's revisions."),
    principle: str = typer.Option(None, "--principle", help=f"ablate: a principle ({', '.join(PRINCIPLES)})."),
    change: str = typer.Option(None, "--change", help="ablate: one change's id, as insights.json lists it."),
    out: Path = typer.Option(None, "--out", help="Where insights.json goes (default: in the run folder; for several "
                             "runs, ./insights.json)."),
) -> None:
    """Which changes made the apps better for agents: the principle table (association), or an ablation (cause)."""
    if targets[0] == "ablate":
        if out is not None:
            raise _fail("--out belongs to the principle table: an ablation writes RUN_DIR/ablations/NAME/")
        _ablate(targets[1:], principle, change)
        return
    if principle or change:
        raise _fail("--principle and --change belong to `aui insights ablate RUN_DIR`")
    runs = [Path(target) for target in targets]
    for run_dir in runs:
        if not (run_dir / "results.json").is_file():
            raise _fail(f"{run_dir}: not a finished run folder (no results.json)")
    with exit_on(FileNotFoundError, ValueError):
        found = asyncio.run(insights_of(runs))
    path = write_insights(found, out or (runs[0] / INSIGHTS_FILE if len(runs) == 1 else Path(INSIGHTS_FILE)))
    console.print(principle_table(found))
    ratio = "–" if found.flips_attributed_ratio is None else pct(found.flips_attributed_ratio)
    console.print(f"{found.flips_attributed} of {found.flips_total} flips ({ratio} %) have a change that touched them; "
                  f"{found.pairs} task pairs compared, {found.left_out} left out (no valid checker on one version)"
                  + (" · every role offline" if found.offline else ""), soft_wrap=True)
    console.print(f"[dim]{found.note}[/]", soft_wrap=True)
    for run_dir in runs:
        _refresh_report(run_dir)
    console.print(f"insights: {path}")


def principle_table(found: Insights) -> Table:
    table = Table(title="Principles: tasks their applied changes touched (association, not cause)")
    for name in PRINCIPLE_COLUMNS:
        table.add_column(name, justify="left" if name == "principle" else "right")
    for cells in principle_cells(found):
        table.add_row(*cells)
    return table


def _ablate(targets: list[str], principle: str | None, change: str | None) -> None:
    if len(targets) != 1:
        raise _fail("usage: aui insights ablate RUN_DIR --principle P | --change ID (one run folder)")
    if (principle is None) == (change is None):
        raise _fail("aui insights ablate: give exactly one of --principle and --change")
    if principle is not None and principle not in PRINCIPLES:
        raise _fail(f"--principle {principle!r}: not a principle; the principles are {', '.join(PRINCIPLES)}")
    run_dir = Path(targets[0])
    if not (run_dir / "results.json").is_file() or not (run_dir / "manifest.json").is_file():
        raise _fail(f"{run_dir}: not a finished run folder (no results.json and manifest.json)")
    from flows import ablation_flow  # Prefect loads with it: only when an ablation runs

    with exit_on(FileNotFoundError, ValueError):
        ablation = asyncio.run(ablation_flow(run_dir)(str(run_dir.resolve()), principle=principle, change=change))
    print_ablation(ablation)
    _refresh_report(run_dir)


def print_ablation(ablation: Ablation) -> None:
    left_out = ablation.principle or ablation.change
    for revision in ablation.revisions:
        console.print(f"{revision.app_id} · {revision.track} · round {revision.round}: SR {pct(revision.full_sr)} → "
                      f"{pct(revision.ablated_sr)} without {'; '.join(revision.left_out)[:160]}", soft_wrap=True)
    for skipped in ablation.skipped:
        console.print(f"[dim]skipped {skipped}[/]", soft_wrap=True)
    console.print(f"[dim]{ablation.selection}[/]", soft_wrap=True)
    if not ablation.tasks:
        console.print(f"nothing to compare: no revision of the run applied {left_out}")
        return
    ci = interval_text(ablation.ci95) or "–"
    console.print(f"without {left_out}: SR {pct(ablation.full_sr)} → {pct(ablation.ablated_sr)} on the same "
                  f"{ablation.tasks} tasks; paired difference {pct(ablation.paired_diff)} pts, 95 % CI {ci}, McNemar p "
                  f"{p_value(ablation.mcnemar_p)}" + (" · every role offline" if ablation.offline else ""), soft_wrap=True)
    if ablation.cache:
        console.print("stage runs: " + " · ".join(f"{kind} {n['ran']} ran, {n['reused']} reused"
                                                  for kind, n in ablation.cache.items()), soft_wrap=True)
    console.print(f"[dim]{ablation.note}[/] → {ablation.folder}", soft_wrap=True)


def _refresh_report(run_dir: Path) -> None:
    data = read_results(run_dir)
    write_report(run_dir, table_rows(data.apps, data.weights), data.apps, data.offline_roles, data.usage)
