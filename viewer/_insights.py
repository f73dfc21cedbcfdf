"""The viewer's design insights pages (issue 31), read from a run's insights.json and ablations.

    /runs/{run}/insights                        the principle table (association), the ablations (cause), and
                                                per app what fixed (or broke) which task
    /runs/{run}/insights/principles/{name}      the flips a principle's changes are linked to, the linked elements
                                                before and after side by side, and the changes themselves
    /runs/{run}/insights/apps/{app_id}          one app: every flip with the changes that touched it
"""

from __future__ import annotations

from collections.abc import Callable

from fastapi import FastAPI, HTTPException, Request

from results import Insights, TaskFlip, interval_text, p_value, pct, read_ablations, read_insights

from ._pages import file_url
from ._runs import Run


def _flip(run: Run, flip: TaskFlip, changes: dict) -> dict:
    return {"app_id": flip.app_id, "task_id": flip.task_id, "rounds": f"{flip.revised_from} → {flip.round}",
            "direction": flip.direction, "track": flip.track, "principles": flip.principles,
            "changes": [changes[c] for c in flip.changes if c in changes],
            "crops": [{"element": c.element, "before": file_url(run, c.before), "after": file_url(run, c.after)}
                      for c in flip.crops],
            "trajectories": flip.trajectories}


def _read(run: Run) -> tuple[Insights, dict[str, dict]]:
    """The run's insights, and its changes by id as the pages show them (HTTP 404 without insights)."""
    try:
        insights = read_insights(run.path)
    except ValueError as exc:
        raise HTTPException(404, str(exc)) from None
    if insights is None:
        raise HTTPException(404, f"run '{run.name}' has no insights yet: aui insights {run.path}")
    return insights, {c.id: {"id": c.id, "text": c.text, "principle": c.principle, "how": c.how}
                      for c in insights.changes}


def insights_page(run: Run) -> dict:
    insights, changes = _read(run)
    rows = [{"principle": r.principle, "applied": r.applied, "unverifiable": r.unverifiable, "revisions": r.revisions,
             "apps": r.apps, "tasks": r.tasks, "gained": r.gained,
             "lost": r.lost, "net": pct(r.net), "ci": interval_text(r.net_ci95) or "–",
             "p": p_value(r.mcnemar_p)}
            for r in sorted(insights.principles, key=lambda r: -(r.net or 0))]
    found = read_ablations(run.path)
    ablations = [{"left_out": a.principle or a.change, "revisions": len(a.revisions), "tasks": a.tasks,
                  "full": pct(a.full_sr), "ablated": pct(a.ablated_sr), "diff": pct(a.paired_diff),
                  "ci": interval_text(a.ci95) or "–", "p": p_value(a.mcnemar_p)}
                 for a in found]
    selection = found[0].selection if found else ""
    apps: dict[str, list[dict]] = {}
    for flip in insights.flips:
        apps.setdefault(flip.app_id, []).append(_flip(run, flip, changes))
    return {"run": run, "insights": insights, "rows": rows, "ablations": ablations, "selection": selection, "apps": apps,
            "ratio": pct(insights.flips_attributed_ratio)}


def principle_page(run: Run, principle: str) -> dict:
    insights, changes = _read(run)
    row = next((r for r in insights.principles if r.principle == principle), None)
    if row is None:
        raise HTTPException(404, f"run '{run.name}' has no applied change answering to '{principle}'")
    return {"run": run, "principle": principle, "row": {"net": pct(row.net), "ci": interval_text(row.net_ci95) or "–", **row.model_dump()},
            "flips": [_flip(run, f, changes) for f in insights.flips if principle in f.principles],
            "changes": [c for c in insights.changes if c.principle == principle and c.counted],
            "note": insights.note}


def app_insights_page(run: Run, app_id: str) -> dict:
    insights, changes = _read(run)
    flips = [_flip(run, f, changes) for f in insights.flips if f.app_id == app_id]
    revised = [c for c in insights.changes if c.app_id == app_id and c.counted]
    if not flips and not revised:
        raise HTTPException(404, f"run '{run.name}' has no revision of app '{app_id}'")
    return {"run": run, "app_id": app_id, "flips": flips, "changes": revised, "note": insights.note}


def add_insights_routes(app: FastAPI, run_named: Callable[[str], Run], page) -> None:
    """The insights pages; `run_named(name)` is the run called `name` (HTTP 404 without one)."""
    @app.get("/runs/{name}/insights")
    def insights(request: Request, name: str):
        return page(request, "insights.html", insights_page(run_named(name)))

    @app.get("/runs/{name}/insights/principles/{principle}")
    def principle(request: Request, name: str, principle: str):
        return page(request, "insights_principle.html", principle_page(run_named(name), principle))

    @app.get("/runs/{name}/insights/apps/{app_id}")
    def app_insights(request: Request, name: str, app_id: str):
        return page(request, "insights_app.html", app_insights_page(run_named(name), app_id))
