"""The results' tables as `aui run` and `aui report` print them: Table 3's shape, SR per level, the overall figures
with their 95 % intervals, and the paired comparisons as sentences (the figures are `results`')."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from apps_prompts import LEVELS
from results import (
    COMPARISON_NOTE,
    DOMAINS,
    INTERVAL_NOTE,
    best_rounds,
    cell_figures,
    comparison_lines,
    pct,
    with_interval,
)


def track_columns(rows) -> tuple[str, ...]:
    """The columns naming a row's track: coder, CUA, mode, and the commenter mode when the sweep compares several."""
    return ("coder", "CUA", "mode", "commenter")[:4 if len({row.commenter_mode for row in rows}) > 1 else 3]


def track_cells(row, labels: tuple[str, ...]) -> list[str]:
    """A row's cells under `track_columns`."""
    return [row.coder, row.cua, row.mode, row.commenter_mode or "–"][:len(labels)]


def one_line_width(headers, rows) -> int:
    """The width a table needs with every cell on one line: its widest cell per column, 3 between columns, 1 border."""
    widths = [max(len(cell) for cell in column) for column in zip(headers, *rows)]
    return sum(widths) + 3 * len(widths) + 1


def results_table(rows, width: int | None = None) -> Table:
    """FC / FC proven / SR / weighted per domain (only domains with tasks), one line per coder × CUA × mode × round.

    When the one-line cells would make the table wider than `width` (a 120-column terminal with six
    domains), each domain's cell stacks its four figures on four lines instead: nothing is cut.
    """
    domains = [d for d in DOMAINS if any(r.tasks.get(d) for r in rows)] + ["overall"]
    labels = track_columns(rows)
    best = best_rounds(rows)
    records = [(track_cells(row, labels), f"{row.round}{' ★' if best.get(row.track_key) == row.round else ''}",
                [cell_figures(row, d) for d in domains], pct(row.sr_supported.get("overall")),
                pct(row.sr_proven.get("overall")), str(row.tasks["overall"])) for row in rows]
    headers = (*labels, "round", *domains, "SR sup.", "SR prov.", "tasks")
    one_line = [[*names, round_, *(" / ".join(f) for f in figures), *rest] for names, round_, figures, *rest in records]
    stacked = width is not None and one_line_width(headers, one_line) > width
    table = Table(title="FC / FC proven / SR / weighted (%) — paper Table 3 shape, with OSUniverse's weighted score",
                  caption=("★ best round · each domain cell: FC, FC proven, SR, weighted (top to bottom)" if stacked else
                           "★ best round · each domain cell: FC / FC proven / SR / weighted")
                          + " · SR over all tasks (the paper's); weighted = Σ w·passed / Σ w·n by task level; sup. = SR "
                          "over tasks with a valid checker; prov. = SR over tasks with a proven checker",
                  show_lines=stacked)
    for column in headers:
        table.add_column(column, justify="left" if column in labels else "right", overflow="fold")
    for names, round_, figures, *rest in records:
        cells = ["\n".join(f) if stacked else " / ".join(f) for f in figures]
        table.add_row(*names, round_, *cells, *rest)
    return table


def levels_table(rows) -> Table:
    """SR per task level (only the levels with tasks; 'none': tasks without a level), one line per table row."""
    levels = [level for level in [*LEVELS, "none"] if any(level in row.sr_per_level for row in rows)]
    labels = track_columns(rows)
    table = Table(title="SR per task level (%)",
                  caption="over all domains" + ("; 'none' = tasks without a level" if "none" in levels else ""))
    for column in (*labels, "round", *levels):
        table.add_column(column, justify="left" if column in labels else "right", overflow="fold")
    for row in rows:
        table.add_row(*track_cells(row, labels), str(row.round),
                      *(pct(row.sr_per_level.get(level)) for level in levels))
    return table


def interval_table(rows) -> Table:
    """Per coder × CUA × mode × round, over all its tasks: FC, FC proven, SR and the weighted score with their
    95 % intervals ("57.3 [47.6, 66.4]"). Per domain they are in results.md, results.json and report.html."""
    labels = track_columns(rows)
    table = Table(title="Overall, with 95 % intervals (%)", caption=escape(INTERVAL_NOTE + " Per domain: results.md, report.html."))
    for column in (*labels, "round", "tasks", "FC", "FC proven", "SR", "weighted"):
        table.add_column(column, justify="left" if column in labels else "right", overflow="fold")
    best = best_rounds(rows)
    for row in rows:
        figures = [with_interval(pct(getattr(row, figure).get("overall")), getattr(row, f"{figure}_ci95").get("overall"))
                   for figure in ("fc", "fc_proven", "sr", "weighted")]
        star = " ★" if best.get(row.track_key) == row.round else ""
        table.add_row(*track_cells(row, labels), f"{row.round}{star}", str(row.tasks.get("overall", 0)), *figures)
    return table


def print_comparisons(console: Console, found) -> None:
    """The paired comparisons, one line each ("… — round 1 vs round 0: +11.7 points [3.6, 19.4], p = 0.008, …")."""
    if not found:
        return
    console.print("[bold]Paired comparisons of SR[/] (on the same tasks)")
    for line in comparison_lines(found):
        console.print("  " + escape(line), soft_wrap=True, highlight=False)
    console.print(escape(COMPARISON_NOTE), soft_wrap=True, highlight=False, style="dim")
