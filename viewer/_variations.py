"""What the viewer shows of a run's variations (issue 17, OpenApps' axis).

The run page gets, per track and round, the variation × app heatmap of SR over the common tasks,
the spread across variations and the gap flag, and the failure modes per variation — read from
`results.json`'s `variations` rows (`results.VariationRow`). The app page gets, per round, the
default look beside each variant at load, each variant's tasks linked to their trajectories, and
the tasks its proof excluded with the reasons.
"""

from __future__ import annotations

from cua import FAILURE_MODES
from results import GAP_FACTOR, AppRoundResult, Track, VariationRow, gap_label, heat_class, pct, track_text

from ._runs import Run, track_id


def run_variations(run: Run) -> tuple[list[dict], list[str]]:
    """Per track and round: heatmap, spread, failure modes and exclusions; and what could not be read."""
    sections, problems = [], []
    for index, raw in enumerate(run.results.variations if run.results else []):
        try:
            row = VariationRow.model_validate(raw)
        except ValueError as exc:
            problems.append(f"results.json: variations[{index}] is not a valid variation row "
                            f"({str(exc).splitlines()[0]})")
            continue
        apps = list(row.by_app)
        heatmap = []
        for name in row.variations:
            cells = [{"app": app, "present": name in row.by_app[app], "sr": pct(row.by_app[app].get(name)),
                      "n": row.by_app_n.get(app, {}).get(name), "heat": heat_class(row.by_app[app].get(name))}
                     for app in apps]
            heatmap.append({"variation": name, "cells": cells, "sr": pct(row.sr.get(name)), "heat": heat_class(row.sr.get(name)),
                            "n": sum(found.get(name, 0) for found in row.by_app_n.values()),
                            "kept": pct(row.sr_kept.get(name)), "rollouts": row.rollouts.get(name, 0),
                            "excluded": row.excluded.get(name, 0)})
        seen = {mode for found in row.failure_modes.values() for mode in found}
        modes = [mode for mode in FAILURE_MODES if mode in seen] + sorted(seen - set(FAILURE_MODES))
        track = Track(coder=row.coder, cua=row.cua, mode=row.mode, commenter_mode=row.commenter_mode)
        sections.append({
            "track": track_text(row.track_key), "track_id": track_id(track), "round": row.round,
            "apps": apps, "heatmap": heatmap, "common": row.tasks_common, "valid": row.tasks_valid,
            "repeats": row.repeats, "mean": pct(row.mean), "std": pct(row.std), "mad": pct(row.mad),
            "min": pct(row.min), "max": pct(row.max), "within": pct(row.std_within), "gap": gap_label(row),
            "modes": modes, "failures": [{"variation": name, "rollouts": row.rollouts.get(name, 0),
                                          "failed": row.failures.get(name, 0),
                                          "counts": [row.failure_modes.get(name, {}).get(mode, 0) for mode in modes]}
                                         for name in row.variations],
            "excluded": sum(row.excluded.values()), "errors": row.errors})
    return sections, problems


STATE_MARKS = {"success": "✓", "failure": "✗", "unsupported": "n/a"}


def task_cell(outcome) -> dict:
    """A task outcome's cell: success, failure, or unsupported (no valid checker), its mark, title and trajectory."""
    state = ("success" if outcome.success and outcome.checker_valid else
             "unsupported" if not outcome.checker_valid else "failure")
    return {"state": state, "label": STATE_MARKS[state], "title": outcome.termination or outcome.reason or state,
            "trajectory": outcome.trajectory}


def _tasks(outcomes) -> list[dict]:
    return [{"task_id": t.task_id, **task_cell(t), "modes": t.failure_modes} for t in outcomes]


def app_variants(run: Run, result: AppRoundResult, file_url) -> list[dict]:
    """One app version's looks at load: the default first, then each variation (empty without variations)."""
    if not result.variations:
        return []
    valid = [t for t in result.tasks if t.checker_valid]
    return [{"name": "default", "transform": None, "screenshot": file_url(run, result.screenshot),
             "screenshot_name": result.screenshot, "sr": pct(sum(t.passed for t in valid) / len(valid) if valid else None),
             "passed": sum(t.passed for t in valid), "kept": len(valid), "tasks": _tasks(result.tasks),
             "excluded": [], "unproven": [], "error": None, "proof": None}] + [{
        "name": varied.variation, "transform": varied.transform, "screenshot": file_url(run, varied.screenshot),
        "screenshot_name": varied.screenshot, "sr": pct(varied.sr) if varied.tasks else "–",
        "passed": sum(t.passed for t in varied.tasks), "kept": len(varied.kept), "tasks": _tasks(varied.tasks),
        "excluded": sorted(varied.excluded.items()), "unproven": varied.unproven, "error": varied.error,
        "proof": file_url(run, varied.proof)} for varied in result.variations]


GAP_RULE = (f"std across variations > {GAP_FACTOR:g} × std within (across repeats), OpenApps' rule of thumb; "
            "'?' with a single repeat")
