"""The report's "Design insights" section: the principle table (association), the flips and the changes that
touched them, and every ablation of the run (cause) — from `insights.json` and `ablations/*/ablation.json`."""

from __future__ import annotations

from pathlib import Path

from ._error_bars import interval_text
from ._format import esc, p_value, pct
from ._insight_records import Ablation, Insights, read_ablations, read_insights

PRINCIPLE_COLUMNS = ("principle", "applied", "unverifiable", "revisions", "apps", "tasks touched", "gained", "lost",
                     "net (pts)", "95 % CI", "McNemar p")
"""The principle table's columns (report.html, `principles_markdown`): applied and unverifiable count changes,
revisions the revisions that applied the principle (what an ablation of it makes again)."""


def principle_cells(insights: Insights) -> list[list[str]]:
    """Each principle's row as every table shows it, in `PRINCIPLE_COLUMNS`' order, the largest net first."""
    return [[r.principle, str(r.applied), str(r.unverifiable), str(r.revisions), str(r.apps), str(r.tasks),
             str(r.gained), str(r.lost), pct(r.net), interval_text(r.net_ci95) or "–", p_value(r.mcnemar_p)]
            for r in sorted(insights.principles, key=lambda r: -(r.net or 0))]


def _markdown(columns: tuple[str, ...], rule: str, rows: list[list[str]]) -> str:
    return "\n".join(["| " + " | ".join(columns) + " |", rule, *("| " + " | ".join(cells) + " |" for cells in rows)])


def _html(columns: tuple[str, ...], rows: list[list[str]]) -> str:
    head = "".join(f"<th>{esc(column)}</th>" for column in columns)
    body = "".join("<tr>" + "".join(f"<td>{esc(cell)}</td>" for cell in cells) + "</tr>" for cells in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


def principles_markdown(insights: Insights) -> str:
    """The principle table as Markdown (the report's, cell for cell)."""
    rule = "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|"
    return _markdown(PRINCIPLE_COLUMNS, rule, principle_cells(insights))


def principles_html(insights: Insights) -> str:
    ratio = "–" if insights.flips_attributed_ratio is None else pct(insights.flips_attributed_ratio)
    return (f"<p class=note>{esc(insights.note)} Over {insights.pairs} task pairs ({insights.left_out} left out: no valid "
            f"checker on one version); {insights.flips_attributed} of {insights.flips_total} flips ({ratio} %) have a "
            "change that touched them. Applied and unverifiable count changes (unverifiable: nothing on the pages could "
            "tell; never counted as applied); revisions: those that applied the principle, what an ablation of it makes "
            "again.</p>" + _html(PRINCIPLE_COLUMNS, principle_cells(insights)))


def flips_html(insights: Insights) -> str:
    if not insights.flips:
        return ""
    rows = "".join(
        f"<tr><td>{esc(f.app_id)}</td><td>{esc(f.task_id)}</td><td>{f.revised_from} → {f.round}</td><td>{esc(f.direction)}</td>"
        f"<td>{esc(', '.join(f.principles) or '–')}</td><td>{len(f.changes)}</td><td>"
        + " ".join(f'<a href="{esc(t)}/dashboard.png">{label}</a>' for t, label in zip(f.trajectories, ("before", "after")))
        + "</td></tr>" for f in insights.flips)
    return ("<h3>Tasks that flipped, and the changes that touched them</h3><table><tr><th>app</th><th>task</th>"
            f"<th>rounds</th><th>flip</th><th>principles</th><th>changes</th><th>dashboards</th></tr>{rows}</table>")


ABLATION_COLUMNS = ("left out", "revisions", "tasks", "SR full", "SR ablated", "difference (pts)", "95 % CI",
                    "McNemar p", "gained", "lost")
"""The ablation table's columns (report.html, `ablations_markdown`): gained = passed only without it (ablated only),
lost = passed only with it (full only)."""


def ablation_cells(ablation: Ablation) -> list[str]:
    """One ablation's row as every table shows it, in `ABLATION_COLUMNS`' order."""
    a = ablation
    return [str(a.principle or a.change), str(len(a.revisions)), str(a.tasks), pct(a.full_sr), pct(a.ablated_sr),
            pct(a.paired_diff), interval_text(a.ci95) or "–", p_value(a.mcnemar_p), str(a.ablated_only), str(a.full_only)]


def ablations_html(ablations: list[Ablation]) -> str:
    if not ablations:
        return ""
    return (f"<h3>Ablations</h3><p class=note>{esc(ablations[0].note)} {esc(ablations[0].selection)}</p>"
            + _html(ABLATION_COLUMNS, [ablation_cells(a) for a in ablations]))


def ablations_markdown(ablations: list[Ablation]) -> str:
    """The ablation table as Markdown (the report's, cell for cell); "" without ablations."""
    if not ablations:
        return ""
    return _markdown(ABLATION_COLUMNS, "|---|" + "---:|" * (len(ABLATION_COLUMNS) - 1),
                     [ablation_cells(a) for a in ablations])


def insights_section_html(run_dir: Path) -> str:
    """The section, or "" when the run has neither insights nor ablations."""
    insights, ablations = read_insights(run_dir), read_ablations(run_dir)
    if insights is None and not ablations:
        return ""
    body = (principles_html(insights) + flips_html(insights) if insights else "") + ablations_html(ablations)
    return f"<h2>Design insights</h2>{body}"
