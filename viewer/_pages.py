"""What each page shows, built from the run's models (the templates only lay it out).

Every builder returns a plain dict for its template (HTTP 404 for what the run does not have). A
part of a run that cannot be read (a missing screenshot, a truncated trajectory.json) becomes a
message on the page that needs it; the rest of the page, and every other page, still works.
"""

from __future__ import annotations

import difflib
import json
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from fastapi import HTTPException

from coder import ContractResult
from commenter import Feedback
from cua import Trajectory
from results import INSIGHTS_FILE, AppRoundResult, TableRow, Track, interval_text, pass_counts, pct, track_text
from verifier.judge import Judgement, Label, agreement_report, read_judgements, read_labels

from ._runs import Run, RunIndex, TrajectoryEntry, track_id
from ._variations import GAP_RULE, app_variants, run_variations, task_cell

MAX_DIFF_LINES = 3_000


@dataclass(frozen=True)
class ViewerSettings:
    """How the viewer was started: who labels, and whether labelling is blind."""

    who: str
    blind: bool = True


def file_url(run: Run, relative: str | None) -> str | None:
    """The URL of a file of the run, or None if it is not there (the page says so).

    The URL carries the file's modification time, so the browser may keep the file as long as it
    likes (`Cache-Control: immutable`): a re-run that rewrites it gives it a new URL.
    """
    if relative:
        with suppress(OSError):
            return f"/files/{quote(run.name)}/{quote(relative)}?v={(run.path / relative).stat().st_mtime_ns:x}"
    return None


# ---------------------------------------------------------------------------------------------- runs


def _usage(run: Run) -> dict:
    """Token use and cost per role (and per commenter mode), and the model calls in all."""
    usage = run.results.usage if run.results else {}
    by_role = usage.get("by_role") or {}
    rows = [{"role": role, **entry} for role, entry in by_role.items()]
    rows += [{"role": f"commenter ({mode})", **entry} for mode, entry in (usage.get("by_commenter_mode") or {}).items()]
    calls = (usage.get("calls") or {}).get("calls")
    return {"usage": [{"role": row["role"], "calls": int(row.get("calls", 0)), "prompt": int(row.get("prompt_tokens", 0)),
                       "completion": int(row.get("completion_tokens", 0)), "cost": float(row.get("cost_usd", 0) or 0)}
                      for row in rows],
            "model_calls": int(calls) if calls is not None else sum(int(entry.get("calls", 0) or 0)
                                                                     for entry in by_role.values())}


def _track_rows(run: Run) -> list[dict]:
    """Per track: FC / FC proven / SR overall for each round."""
    rows: dict[tuple, dict] = {}
    for row in run.results.table if run.results else []:
        entry = rows.setdefault(row.track_key, {"track": track_text(row.track_key), "rounds": {}})
        entry["rounds"][row.round] = _figures(row)
    return list(rows.values())


def _figures(row: TableRow, domain: str = "overall") -> dict:
    return {"fc": pct(row.fc.get(domain)), "fc_proven": pct(row.fc_proven.get(domain)), "sr": pct(row.sr.get(domain)),
            "sr_proven": pct(row.sr_proven.get(domain)), "tasks": row.tasks.get(domain, 0),
            "fc_ci": interval_text(row.fc_ci95.get(domain)), "sr_ci": interval_text(row.sr_ci95.get(domain)),
            "weighted": pct(row.weighted.get(domain)), "weighted_ci": interval_text(row.weighted_ci95.get(domain))}


def _comparisons(run: Run) -> list[dict]:
    """The run's paired comparisons of SR (results.json), as sentences under what each pair shares."""
    return [{"context": c.context, "pair": f"{c.compared} vs {c.baseline}", "summary": c.summary(), "p": c.p_value}
            for c in (run.results.comparisons if run.results else [])]


def runs_page(index: RunIndex) -> dict:
    runs = [{
        "name": run.name, "path": str(run.path), "date": run.modified.strftime("%Y-%m-%d %H:%M UTC"),
        "finished": run.finished, "problems": run.problems, "offline": run.offline,
        "coders": run.config.get("coders") or sorted({t.coder for t in run.tracks()}),
        "cuas": run.config.get("cua_policies") or sorted({t.cua for t in run.tracks()}),
        "modes": run.config.get("revision_modes") or sorted({t.mode for t in run.tracks()}),
        "apps": len(run.app_ids()), "rounds": run.rounds, "tracks": _track_rows(run),
        "trajectories": len(run.trajectories), **_usage(run),
    } for run in index.runs()]
    return {"runs": runs, "roots": [str(root) for root in index.roots]}


# ----------------------------------------------------------------------------------------------- run


def _labelled_by(run: Run, who: str) -> dict[str, Label]:
    """This person's latest label per trajectory of the run."""
    return {label.trajectory_id: label for label in read_labels(run.path).labels if label.who == who}


def label_progress(run: Run, who: str) -> dict:
    known = {entry.trajectory_id for entry in run.trajectories}
    return {"labelled": len(known & set(_labelled_by(run, who))), "total": len(known), "who": who}


def run_page(run: Run, settings: ViewerSettings) -> dict:
    apps = []
    for app_id in run.app_ids():
        for track in run.tracks(app_id):
            rounds = run.app_rounds(app_id, track)
            apps.append({"app_id": app_id, "domain": rounds[0].domain, "track": str(track), "track_id": track_id(track),
                         "rounds": [{"round": r.round, "fc": pct(r.fc), "sr": pct(r.sr), "errors": len(r.errors),
                                     "tasks": len(r.tasks)} for r in rounds]})
    table = [{"track": track_text(row.track_key), "round": row.round,
              "domains": {d: _figures(row, d) for d, n in row.tasks.items() if n}}
             for row in (run.results.table if run.results else [])]
    first = run.trajectories[0].trajectory_id if run.trajectories else None
    variations, variation_problems = run_variations(run)
    return {"run": run, "apps": apps, "table": table, "rounds": run.rounds, **_usage(run),
            "progress": label_progress(run, settings.who), "first_trajectory": first,
            "report": file_url(run, "report.html"), "insights": (run.path / INSIGHTS_FILE).is_file(),
            "agreement": _agreement(run), "variations": variations,
            "variation_problems": variation_problems, "gap_rule": GAP_RULE, "comparisons": _comparisons(run)}


def _agreement(run: Run) -> list[dict]:
    """Every two judges of the run (checker, model or offline judge, people), computed from the files now."""
    if not ((run.path / "labels.jsonl").is_file() or (run.path / "judgements.jsonl").is_file()) or not run.finished:
        return []

    try:
        report = agreement_report(run.path)
    except (OSError, ValueError):
        return []
    return [{"reference": p.reference, "other": p.other, "n": p.n, "agreement": pct(p.agreement), "kappa":
             "–" if p.kappa is None else f"{p.kappa:.3f}", "balanced_accuracy": pct(p.balanced_accuracy),
             "disagreements": p.disagreements} for p in report.pairs]


# ----------------------------------------------------------------------------------------------- app


def _feedback(run: Run, app_id: str, track: Track, round_: int) -> tuple[Feedback | None, str | None]:
    relative = Path("apps", app_id, track.folder, f"feedback-round-{round_}.json")
    path = run.path / relative
    if not path.is_file():
        return None, None
    try:
        return Feedback.model_validate_json(path.read_bytes()), None
    except ValueError as exc:
        return None, f"{relative.as_posix()}: not a valid feedback file ({str(exc).splitlines()[0]})"


def _diff(run: Run, a: AppRoundResult, b: AppRoundResult) -> dict:
    lines: list[dict] = []
    problems = []
    texts = []
    for result in (a, b):
        try:
            texts.append((run.path / result.html).read_text(encoding="utf-8", errors="replace").splitlines())
        except OSError:
            problems.append(f"{result.html}: the app version is missing")
            texts.append([])
    for line in difflib.unified_diff(texts[0], texts[1], f"round {a.round}", f"round {b.round}", lineterm="", n=2):
        kind = ("hunk" if line.startswith("@@") else "file" if line.startswith(("---", "+++"))
                else "add" if line.startswith("+") else "del" if line.startswith("-") else "same")
        lines.append({"kind": kind, "text": line})
        if len(lines) >= MAX_DIFF_LINES:
            lines.append({"kind": "hunk", "text": f"… cut at {MAX_DIFF_LINES} lines"})
            break
    return {"a": a.round, "b": b.round, "lines": lines, "problems": problems,
            "added": sum(l["kind"] == "add" for l in lines), "removed": sum(l["kind"] == "del" for l in lines)}


def _contract(result: AppRoundResult) -> ContractResult | None:
    if result.contract:
        with suppress(ValueError):
            return ContractResult.model_validate(result.contract)
    return None


def app_page(run: Run, app_id: str, track_key: str | None, diff_a: int | None, diff_b: int | None) -> dict:
    tracks = run.tracks(app_id)
    if not tracks:
        raise HTTPException(404, f"run '{run.name}' has no app '{app_id}'")
    track = next((t for t in tracks if track_id(t) == track_key), tracks[0])
    rounds = run.app_rounds(app_id, track)
    versions = []
    for result in rounds:
        feedback, problem = _feedback(run, app_id, track, result.round)
        versions.append({
            "round": result.round, "fc": pct(result.fc), "fc_proven": pct(result.fc_proven), "sr": pct(result.sr),
            "screenshot": file_url(run, result.screenshot), "screenshot_name": result.screenshot,
            "html": file_url(run, result.html), "html_name": result.html, "contract": _contract(result),
            "revised_from": result.revised_from, "regressions": result.regressions,
            "gaming": [s.model_dump() for s in result.gaming_suspects], "errors": result.errors,
            "feedback": feedback, "feedback_problem": problem, "looks": app_variants(run, result, file_url),
        })
    task_ids = list(dict.fromkeys(t.task_id for r in rounds for t in r.tasks))
    counts = {r.round: pass_counts(r) for r in rounds}  # k of N across repeats
    grid = []
    for task_id in task_ids:
        cells = []
        for result in rounds:
            outcome = next((t for t in result.tasks if t.task_id == task_id), None)
            if outcome is None:
                cells.append({"state": "absent", "label": "–"})
                continue
            k, n = counts[result.round].get(task_id, (0, 0))
            cells.append({**task_cell(outcome), "proof": outcome.proof, "repeats": f"{k}/{n}" if n > 1 else None})
        level = next((t.level for r in rounds for t in r.tasks if t.task_id == task_id and t.level), None)
        grid.append({"task_id": task_id, "level": level, "cells": cells})
    diff = None
    if len(rounds) >= 2:
        by_round = {r.round: r for r in rounds}
        a = by_round.get(diff_a if diff_a is not None else rounds[0].round, rounds[0])
        b = by_round.get(diff_b if diff_b is not None else rounds[-1].round, rounds[-1])
        diff = _diff(run, a, b)
    return {"run": run, "app_id": app_id, "domain": rounds[0].domain if rounds else "", "track": track,
            "track_id": track_id(track), "tracks": [{"id": track_id(t), "name": str(t)} for t in tracks],
            "versions": versions, "rounds": [r.round for r in rounds], "grid": grid, "diff": diff,
            "varied": any(version["looks"] for version in versions)}


# ---------------------------------------------------------------------------------------- trajectory


def _action(action) -> dict | None:
    if action is None:
        return None
    return {**action.model_dump(mode="json", exclude_none=True, exclude_defaults=True), "kind": action.kind,
            "describe": action.describe()}


def _steps(run: Run, trajectory: Trajectory, relative: str) -> tuple[list[dict], list[str]]:
    problems: list[str] = []

    def url(name: str | None) -> str | None:
        if not name:
            return None
        found = file_url(run, f"{relative}/{name}")
        if found is None:
            problems.append(f"{relative}/{name}: the screenshot is missing")
        return found

    initial = url(trajectory.initial_screenshot)
    steps = [{"index": 0, "before": None, "after": initial, "after_name": trajectory.initial_screenshot,
              "initial": True}]
    before = initial
    for step in trajectory.steps:
        after = url(step.screenshot)
        steps.append({
            "index": step.index, "before": before, "after": after, "after_name": step.screenshot, "initial": False,
            "model_action": _action(step.model_action), "screen_action": _action(step.screen_action),
            "raw_text": step.raw_text, "thought": step.thought,
            "target": step.target.model_dump(mode="json") if step.target else None,
            "dom_changed": step.dom_changed, "screen_changed": step.screen_changed,
            "checker_passed": step.checker_passed, "checker_error": step.checker_error, "error": step.error,
            "invalid_replies": step.invalid_replies, "notes": step.notes,
            "timings": step.timings.model_dump(mode="json"), "tokens": step.tokens.model_dump(mode="json"),
        })
        before = after if after is not None else before
    return steps, problems


def _judgements(run: Run, trajectory_id: str) -> list[Judgement]:
    """The latest judgement of each judge and mode."""
    return list({(judgement.judge, judgement.mode): judgement for judgement in read_judgements(run.path)
                 if judgement.trajectory_id == trajectory_id}.values())


def trajectory_page(run: Run, trajectory_id: str, settings: ViewerSettings, reveal: bool = False) -> dict:
    entry = run.entry(trajectory_id)
    if entry is None:
        raise HTTPException(404, f"run '{run.name}' has no trajectory '{trajectory_id}'")
    position = run.position(trajectory_id) or 0
    neighbours = {"prev": run.trajectories[position - 1].trajectory_id if position > 0 else None,
                  "next": run.trajectories[position + 1].trajectory_id if position + 1 < len(run.trajectories) else None}
    mine = _labelled_by(run, settings.who).get(trajectory_id)
    shown = not settings.blind or reveal or mine is not None
    checker = checker_verdict(entry)
    page = {"run": run, "entry": entry, "trajectory_id": trajectory_id, "position": position + 1,
            "variation": entry.variation, "injected_steps": [],
            "count": len(run.trajectories), "neighbours": neighbours, "label": mine, "verdict_shown": shown,
            "blind": settings.blind, "progress": label_progress(run, settings.who), "who": settings.who,
            "track_id": track_id(entry.result.track), "problems": [], "trajectory": None, "steps": [],
            "dashboard": file_url(run, entry.outcome.dashboard) if shown else None,
            "trace": file_url(run, entry.outcome.trace), "trace_path": entry.outcome.trace,
            "judgements": _judgements(run, trajectory_id) if shown else [], "checker": checker,
            "disagrees": bool(mine and disagrees(checker, mine.label))}
    try:
        trajectory = Trajectory.load(run.path / trajectory_id)
    except FileNotFoundError:
        page["problems"].append(f"{trajectory_id}/trajectory.json is missing: this rollout left nothing to show")
        return page
    except ValueError as exc:
        page["problems"].append(str(exc).replace(str(run.path) + "/", ""))
        return page
    steps, problems = _steps(run, trajectory, trajectory_id)
    if not shown:  # blind: nothing that tells what the checker decided before the person labels
        for step in steps:
            step.pop("checker_passed", None)
            step.pop("checker_error", None)
    first = steps[1] if len(steps) > 1 else steps[0]  # what the page opens on (the script may move to ?step=N)
    # Steps whose target a serve-time transform added (a variation's decoy, banner, pop-up): the agent acted on
    # something that is not the app's own.
    page["injected_steps"] = [{"index": step["index"], "what": step["target"]["injected"]} for step in steps[1:]
                              if step.get("target") and step["target"].get("injected")]
    page.update(trajectory=trajectory, steps=steps, problems=page["problems"] + problems, first_step=first,
                viewport={"width": trajectory.viewport_width, "height": trajectory.viewport_height},
                steps_json=_script_json(steps))
    return page


def checker_verdict(entry: TrajectoryEntry) -> str:
    if not entry.outcome.checker_valid:
        return "no checker"
    return "success" if entry.outcome.success else "failure"


def disagrees(checker: str, label: str) -> bool:
    """A person's label against the checker's verdict (neither side unsure or without a checker)."""
    return checker in ("success", "failure") and label not in ("unsure", checker)


def _script_json(data: object) -> str:
    """JSON safe inside a <script> element (no `</script>`, no `<!--`)."""
    return json.dumps(data, ensure_ascii=False).replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


# ------------------------------------------------------------------------------------------- compare


@dataclass(frozen=True)
class Side:
    run: Run
    round: int

    @property
    def name(self) -> str:
        return f"{self.run.name} · round {self.round}"


def _outcomes(side: Side) -> dict[tuple, tuple[AppRoundResult, object]]:
    return {(result.app_id, result.track_key, outcome.task_id): (result, outcome)
            for result in side.run.apps if result.round == side.round for outcome in result.tasks}


def compare_page(a: Side, b: Side) -> dict:
    left, right = _outcomes(a), _outcomes(b)
    common = left.keys() & right.keys()
    if not common:  # different tracks in the two runs: match tasks by app and task alone
        left = {(k[0], k[2]): v for k, v in left.items()}
        right = {(k[0], k[2]): v for k, v in right.items()}
        common = left.keys() & right.keys()
    rows = {"to_success": [], "to_failure": [], "same_success": 0, "same_failure": 0}
    for key in sorted(common):
        (ra, oa), (rb, ob) = left[key], right[key]
        won_a, won_b = oa.success and oa.checker_valid, ob.success and ob.checker_valid
        if won_a == won_b:
            rows["same_success" if won_a else "same_failure"] += 1
            continue
        rows["to_success" if won_b else "to_failure"].append({
            "app_id": ra.app_id, "task_id": oa.task_id, "track": track_text(ra.track_key),
            "a": {"trajectory": oa.trajectory, "termination": oa.termination or oa.reason or "–"},
            "b": {"trajectory": ob.trajectory, "termination": ob.termination or ob.reason or "–"}})
    return {"a": a, "b": b, "rows": rows, "common": len(common), "only_a": len(left.keys() - right.keys()),
            "only_b": len(right.keys() - left.keys())}
