"""What `aui run` and `aui report` print of the error bars: the overall figures with their 95 % intervals,
and the paired comparisons as sentences (`results._error_bars`)."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.table import Table


def interval_table(rows) -> Table:
    """Per coder × CUA × mode × round, over all its tasks: FC, FC proven, SR and the weighted score with their
    95 % intervals ("57.3 [47.6, 66.4]"). Per domain they are in results.md, results.json and report.html."""
    from results import INTERVAL_NOTE, best_rounds, with_interval

    commenters = len({row.commenter_mode for row in rows}) > 1
    labels = ("coder", "CUA", "mode", *(("commenter",) if commenters else ()))
    table = Table(title="Overall, with 95 % intervals (%)", caption=escape(INTERVAL_NOTE + " Per domain: results.md, report.html."))
    for column in (*labels, "round", "tasks", "FC", "FC proven", "SR", "weighted"):
        table.add_column(column, justify="left" if column in labels else "right", overflow="fold")
    best = best_rounds(rows)
    for row in rows:
        names = [row.coder, row.cua, row.mode, *((row.commenter_mode or "–",) if commenters else ())]
        figures = [with_interval(_pct(getattr(row, figure).get("overall")), getattr(row, f"{figure}_ci95").get("overall"))
                   for figure in ("fc", "fc_proven", "sr", "weighted")]
        star = " ★" if best.get(row.track_key) == row.round else ""
        table.add_row(*names, f"{row.round}{star}", str(row.tasks.get("overall", 0)), *figures)
    return table


def print_comparisons(console: Console, found) -> None:
    """The paired comparisons, one line each ("… — round 1 vs round 0: +11.7 points [3.6, 19.4], p = 0.008, …")."""
    if not found:
        return
    from results import COMPARISON_NOTE, comparison_lines

    console.print("[bold]Paired comparisons of SR[/] (on the same tasks)")
    for line in comparison_lines(found):
        console.print("  " + escape(line), soft_wrap=True, highlight=False)
    console.print(escape(COMPARISON_NOTE), soft_wrap=True, highlight=False, style="dim")


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.1f}"
