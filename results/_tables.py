"""Results in the shapes of the paper's tables, pooled over tasks within a cell.

- Table 3: rows coder × CUA × mode (× commenter mode) × round, columns domains, cells FC / SR.
- Table 4: cells "SR (FC)" per CUA.
- Table 5: SR (FC) and the commenter's tokens per commenter mode.

FC = tasks with a valid checker / all tasks; SR = tasks whose checker turned true / all tasks
(the paper's definition: a task without a valid checker is a CUA failure). SR over supported
tasks (the reference code's: successes / tasks with a valid checker) is kept beside it.
FC proven = tasks whose checker was proven (false at load, true after its reference solution) /
all tasks; SR proven = successes / proven tasks — the figures a reader can trust without trusting
the verifier's unproven claims.
"""

from __future__ import annotations

import csv
import io
from collections import defaultdict
from dataclasses import replace

from pydantic import BaseModel, Field, PrivateAttr

from apps_prompts import LEVELS

from ._error_bars import (
    Comparison,
    TaskTally,
    cell_intervals,
    comparison_lines,
    percent,
    rate_interval,
    rounded,
    shown_records,
    task_tallies,
    with_interval,
)
from ._format import pct
from ._outcomes import _OneTrack, DOMAINS, AppRoundResult, share


class TableRow(_OneTrack, BaseModel):
    coder: str
    cua: str
    mode: str
    commenter_mode: str | None = None
    round: int
    fc: dict[str, float | None]
    sr: dict[str, float | None]
    sr_supported: dict[str, float | None] = Field(default_factory=dict, description="Successes / tasks with a valid checker.")
    fc_proven: dict[str, float | None] = Field(default_factory=dict, description="Proven checkers / all tasks.")
    sr_proven: dict[str, float | None] = Field(default_factory=dict, description="Successes / tasks with a proven checker.")
    tasks: dict[str, int]
    proven_tasks: dict[str, int] = Field(default_factory=dict, description="Tasks with a proven checker (SR proven's denominator).")
    weighted: dict[str, float | None] = Field(default_factory=dict, description=(
        "Weighted score Σ w·passed / Σ w·n (w: the task's level's weight), per domain and overall."))
    sr_per_level: dict[str, float | None] = Field(default_factory=dict, description="SR over all domains per task level "
                                                  "('none': tasks without a level); only levels with tasks.")
    sr_repeats: list[float] = Field(default_factory=list, description="Overall SR of each repeat (repeat 0 first).")
    weighted_repeats: list[float] = Field(default_factory=list, description="Overall weighted score of each repeat.")
    # Each figure's 95 % interval beside it, per domain: [low, high] as fractions (6 digits), None where the figure is
    # None; empty in a results file from before intervals. See `results._error_bars` for which interval and over what.
    fc_ci95: dict[str, list[float] | None] = Field(default_factory=dict, description="FC's 95 % interval (Wilson, all tasks).")
    sr_ci95: dict[str, list[float] | None] = Field(default_factory=dict, description=(
        "SR's 95 % interval over all tasks (Wilson; with repeats, the bootstrap over tasks)."))
    sr_supported_ci95: dict[str, list[float] | None] = Field(default_factory=dict, description=(
        "SR (supported)'s 95 % interval over the tasks with a valid checker."))
    fc_proven_ci95: dict[str, list[float] | None] = Field(default_factory=dict, description="FC proven's 95 % interval.")
    sr_proven_ci95: dict[str, list[float] | None] = Field(default_factory=dict, description=(
        "SR (proven)'s 95 % interval over the tasks with a proven checker."))
    weighted_ci95: dict[str, list[float] | None] = Field(default_factory=dict, description=(
        "The weighted score's 95 % interval (Wilson with Kish's effective n; with repeats, the bootstrap over tasks)."))
    sr_per_level_ci95: dict[str, list[float] | None] = Field(default_factory=dict, description=(
        "SR per level's 95 % interval over the level's tasks."))
    _tallies: dict[str, list[TaskTally]] = PrivateAttr(default_factory=dict)  # per domain; pooled tables need them

    @property
    def spread(self) -> dict[str, float | int | None]:
        """Across repeats: mean ± (population) std and min–max of SR and of the weighted score."""
        return {"repeats": len(self.sr_repeats), **_spread("sr", self.sr_repeats), **_spread("weighted", self.weighted_repeats)}


def _spread(name: str, values: list[float]) -> dict[str, float | None]:
    if not values:
        return dict.fromkeys((f"{name}_mean", f"{name}_std", f"{name}_min", f"{name}_max"))
    mean = sum(values) / len(values)
    std = (sum((v - mean) ** 2 for v in values) / len(values)) ** 0.5
    return {f"{name}_mean": mean, f"{name}_std": std, f"{name}_min": min(values), f"{name}_max": max(values)}


DEFAULT_WEIGHTS = {"paper": 0.5, "wood": 1.0, "bronze": 2.0, "silver": 4.0, "gold": 8.0}
"""OSUniverse's level weights (a run's own come from `ExperimentConfig.levels`)."""


def _count(results: list[AppRoundResult], weights: dict[str, float]):
    """What the rows need beyond the per-task tallies (key: track and round): the weighted score's sums per domain,
    added rollout by rollout, and the counts of each repeat."""
    weighted: dict[tuple, dict[str, list[float]]] = defaultdict(lambda: defaultdict(lambda: [0.0, 0.0]))
    by_repeat: dict[tuple, dict[int, list[float]]] = defaultdict(lambda: defaultdict(lambda: [0, 0, 0.0, 0.0]))
    for result in results:
        key = (*result.track_key, result.round)
        for repeat, outcomes in result.every_repeat():
            for task in outcomes:
                weight = weights.get(task.level, 1.0) if task.level else 1.0
                for domain in (result.domain, "overall"):
                    weighted[key][domain][0] += weight * task.passed
                    weighted[key][domain][1] += weight
                spread = by_repeat[key][repeat]
                spread[0] += task.passed
                spread[1] += 1
                spread[2] += weight * task.passed
                spread[3] += weight
    return weighted, by_repeat


def _domain_figures(by_domain: dict[str, list[TaskTally]], weighted: dict[str, list[float]]) -> dict[str, dict]:
    """FC, SR, SR (supported), FC proven, SR proven, task counts, proven task counts and weighted score per domain,
    by their `TableRow` field."""
    figures: dict[str, dict] = defaultdict(dict)
    for domain in [*DOMAINS, "overall"]:
        found = by_domain.get(domain, [])
        total, valid, proven = len(found), sum(t.valid for t in found), sum(t.proven for t in found)
        success, rollouts = sum(t.passed for t in found), sum(t.rollouts for t in found)
        valid_rollouts, proven_rollouts = sum(t.valid_rollouts for t in found), sum(t.proven_rollouts for t in found)
        figures["tasks"][domain], figures["proven_tasks"][domain] = total, proven
        figures["fc"][domain] = valid / total if total else None
        figures["sr"][domain] = success / rollouts if rollouts else None
        figures["sr_supported"][domain] = success / valid_rollouts if valid_rollouts else None
        # An older run's verdicts say nothing of proofs: unknown (–), not 0.
        figures["fc_proven"][domain] = proven / total if total and any(t.has_proof for t in found) else None
        figures["sr_proven"][domain] = (sum(t.proven_passed for t in found) / proven_rollouts if proven_rollouts
                                        else None)
        passed_weight, all_weight = weighted.get(domain, [0.0, 0.0])
        figures["weighted"][domain] = passed_weight / all_weight if all_weight else None
    return figures


def table_rows(results: list[AppRoundResult], weights: dict[str, float] | None = None) -> list[TableRow]:
    """Aggregate app results to rows; a domain with no tasks in a row is None (shown as –).

    FC counts each task once (repeat 0: every repeat judges the same version with the same
    checkers); SR, SR (supported), SR (proven), the weighted score and SR per level pool every
    repeat's rollouts. `weights` maps a level to its weight (default: `DEFAULT_WEIGHTS`; a task
    without a level weighs 1).
    """
    weights = {**DEFAULT_WEIGHTS, **(weights or {})}
    weighted, by_repeat = _count(results, weights)
    tallies: dict[tuple, dict[str, list[TaskTally]]] = defaultdict(lambda: defaultdict(list))
    for result in results:
        cell = tallies[(*result.track_key, result.round)]  # a round without tasks still has its row
        for tally in task_tallies(result, weights):
            for domain in (result.domain, "overall"):
                cell[domain].append(tally)
    rows = []
    for key in sorted(tallies):
        coder, cua, mode, commenter_mode, round_ = key
        overall = tallies[key]["overall"]
        levels = {level: sum(t.passed for t in found) / sum(t.rollouts for t in found)
                  for level in [*LEVELS, "none"] if (found := [t for t in overall if t.level == level])}
        repeats = [by_repeat[key][r] for r in sorted(by_repeat[key])]
        intervals = {domain: cell_intervals(tallies[key].get(domain, [])) for domain in [*DOMAINS, "overall"]}
        figures = {f"{figure}_ci95": {domain: rounded(intervals[domain][figure]) for domain in intervals}
                   for figure in ("fc", "sr", "sr_supported", "fc_proven", "sr_proven", "weighted")}
        level_intervals = {level: rounded(rate_interval(((t.app_id, t.task_id), t.passed, t.rollouts)
                                                        for t in overall if t.level == level)) for level in levels}
        row = TableRow(coder=coder, cua=cua, mode=mode, commenter_mode=commenter_mode or None, round=round_,
                       **_domain_figures(tallies[key], weighted[key]), sr_per_level=levels,
                       sr_repeats=[p / n if n else 0.0 for p, n, _, _ in repeats],
                       weighted_repeats=[wp / w if w else 0.0 for _, _, wp, w in repeats],
                       sr_per_level_ci95=level_intervals, **figures)
        row._tallies = {domain: list(found) for domain, found in tallies[key].items()}
        rows.append(row)
    return rows


def best_rounds(rows: list[TableRow]) -> dict[tuple[str, str, str, str], int]:
    """For each track (coder × CUA × mode × commenter mode), the round with the highest overall SR (ties: the earlier)."""
    best: dict[tuple[str, str, str, str], TableRow] = {}
    for row in rows:
        key = row.track_key
        if key not in best or (row.sr["overall"] or 0) > (best[key].sr["overall"] or 0):
            best[key] = row
    return {key: row.round for key, row in best.items()}


def _commenter(mode: str | None) -> str:
    return mode or "–"


def cell_figures(row: TableRow, domain: str) -> tuple[str, str, str, str]:
    """One domain's cell of Table 3, as every surface shows it (results.md, the CLI, report.html): FC, FC proven,
    SR and the weighted score (W), in % ("–" where there is no figure)."""
    return (pct(row.fc[domain]), pct(row.fc_proven.get(domain)), pct(row.sr[domain]), pct(row.weighted.get(domain)))


def markdown_table(rows: list[TableRow]) -> str:
    """Table 3's shape: FC / FC proven / SR / weighted per domain, and SR over supported and proven tasks overall."""
    # The commenter column only when the sweep compares commenter modes (Table 5's axis).
    commenters = len({row.commenter_mode for row in rows}) > 1
    header = ["coder", "CUA", "mode", *(["commenter"] if commenters else []), "round",
              *(f"{d} FC/FCp/SR/W" for d in [*DOMAINS, "overall"]), "overall SR (supported)", "overall SR (proven)", "tasks"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    best = best_rounds(rows)
    for row in rows:
        mark = " ★" if best.get(row.track_key) == row.round else ""
        cells = [row.coder, row.cua, row.mode, *([_commenter(row.commenter_mode)] if commenters else []), f"{row.round}{mark}"]
        cells += [" / ".join(cell_figures(row, d)) for d in [*DOMAINS, "overall"]]
        cells += [pct(row.sr_supported.get("overall")), pct(row.sr_proven.get("overall")), str(row.tasks["overall"])]
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", "FC = function completeness (% tasks with a valid checker, the paper's definition); FCp = FC proven (% "
              "tasks whose checker is false at load and true after its reference solution); SR = CUA success rate (% of "
              "all tasks, the paper's definition); W = weighted score, Σ w·passed / Σ w·n by task level; SR (supported) = "
              "successes / tasks with a valid checker; SR (proven) = successes / tasks with a proven checker. "
              "★ = best round."]
    return "\n".join(lines)


def _sr_fc(sr: float | None, fc: float | None) -> str:
    """One cell of Table 4 / Table 5: "SR (FC)" overall, in %."""
    return f"{pct(sr)} ({pct(fc)})"


def by_cua_table(rows: list[TableRow]) -> list[dict]:
    """Table 4's shape: one row per coder × mode × commenter mode × round, one "SR (FC)" cell per CUA."""
    cuas = sorted({row.cua for row in rows})
    grouped: dict[tuple, dict[str, TableRow]] = {}
    for row in rows:
        grouped.setdefault((row.coder, row.mode, _commenter(row.commenter_mode), row.round), {})[row.cua] = row
    return [{"coder": coder, "mode": mode, "commenter": commenter, "round": round_,
             **{cua: _sr_fc(cells[cua].sr["overall"], cells[cua].fc["overall"]) if cua in cells else "–"
                for cua in cuas},
             # each cell's two intervals beside it, in % like the cell ("<cua> SR_ci95", "<cua> FC_ci95")
             **{f"{cua} {figure}_ci95": percent(getattr(cells[cua], f"{figure.lower()}_ci95").get("overall"))
                for cua in cuas if cua in cells for figure in ("SR", "FC")}}
            for (coder, mode, commenter, round_), cells in sorted(grouped.items())]


def by_commenter_mode_table(rows: list[TableRow], usage: dict | None) -> list[dict]:
    """Table 5's shape: one row per commenter mode — SR (FC) pooled over the last rounds of every track
    with that mode, and the model commenter's tokens (K) in that mode.

    Tokens come from the usage ledger (`usage["by_commenter_mode"]`: the model commenter calls under
    a role per mode, `commenter:<mode>`), which has no finer key than the mode: tracks sharing a mode
    share one row, so the rows' tokens add up to the ledger's commenter total. Offline commenters use
    none. A mode with tokens but no track row still gets a row (SR (FC) `–`), so nothing is dropped.
    """
    tokens = (usage or {}).get("by_commenter_mode") or {}
    last: dict[tuple, TableRow] = {}
    for row in rows:
        if row.commenter_mode is not None and (row.track_key not in last or row.round > last[row.track_key].round):
            last[row.track_key] = row
    pooled: dict[str, list[TableRow]] = {}
    for _, row in sorted(last.items()):
        pooled.setdefault(row.commenter_mode, []).append(row)
    for mode in tokens:
        pooled.setdefault(mode, [])
    table = []
    for mode, track_rows in sorted(pooled.items()):
        tasks = sum(row.tasks["overall"] for row in track_rows)
        # Counts back from each track's overall ratios (tasks × ratio is a whole number), then pooled.
        successes = sum(round((row.sr["overall"] or 0) * row.tasks["overall"]) for row in track_rows)
        valid = sum(round((row.fc["overall"] or 0) * row.tasks["overall"]) for row in track_rows)
        # Pooled as counted: each track's task is one item of the interval (a track's id keeps the tasks apart).
        pooled = [replace(t, app_id=f"{i}/{t.app_id}") for i, row in enumerate(track_rows)
                  for t in row._tallies.get("overall", [])]
        intervals = cell_intervals(pooled) if pooled else {}
        cell = _sr_fc(share(successes, tasks) if tasks else None, share(valid, tasks) if tasks else None)
        rounds = sorted({row.round for row in track_rows})
        used = tokens.get(mode) or {}
        total = (used.get("prompt_tokens") or 0) + (used.get("completion_tokens") or 0)
        table.append({"commenter": mode, "tracks": len(track_rows),
                      "round": (rounds[0] if len(rounds) == 1 else f"{rounds[0]}–{rounds[-1]}") if rounds else "–",
                      "tasks": tasks, "SR (FC)": cell, "SR_ci95": percent(rounded(intervals.get("sr"))),
                      "FC_ci95": percent(rounded(intervals.get("fc"))),
                      "tokens (K)": round(total / 1000, 1), "tokens": total})
    return table


def records_markdown(records: list[dict]) -> str:
    if not records:
        return ""
    records = shown_records(records)
    header = list(records[0])
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(record[column]) for column in header) + " |" for record in records]
    return "\n".join(lines)


_INTERVAL_FIGURES = ("fc", "sr", "sr_supported", "fc_proven", "sr_proven", "weighted")


def _fraction(value: float | None) -> str:
    return "" if value is None else f"{value:.4f}"


def interval_records(rows: list[TableRow]) -> list[dict[str, str]]:
    """Every figure of Table 3 with its 95 % interval, in %: one record per row and domain with tasks (overall last)."""
    commenters = len({row.commenter_mode for row in rows}) > 1
    records = []
    for row in rows:
        for domain in [d for d in DOMAINS if row.tasks.get(d)] + ["overall"]:
            record = {"coder": row.coder, "CUA": row.cua, "mode": row.mode,
                      **({"commenter": _commenter(row.commenter_mode)} if commenters else {}),
                      "round": str(row.round), "domain": domain, "tasks": str(row.tasks.get(domain, 0))}
            record.update({label: with_interval(pct(getattr(row, figure).get(domain)), getattr(row, f"{figure}_ci95").get(domain))
                           for label, figure in _INTERVAL_COLUMNS.items()})
            records.append(record)
    return records


_INTERVAL_COLUMNS = {"FC": "fc", "FC proven": "fc_proven", "SR": "sr", "W": "weighted", "SR (supported)": "sr_supported",
                     "SR (proven)": "sr_proven"}


def comparisons_markdown(found: list[Comparison]) -> str:
    """The paired comparisons as a list of sentences, grouped by what each pair shares."""
    return "\n".join(f"- {line}" for line in comparison_lines(found))


def csv_table(rows: list[TableRow]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    # New columns go last, so readers of the first eight keep working.
    writer.writerow(["coder", "cua", "mode", "round", "domain", "tasks", "fc", "sr", "commenter_mode", "sr_supported",
                     "fc_proven", "sr_proven", "proven_tasks", "weighted",
                     *(f"{figure}_ci95_{end}" for figure in _INTERVAL_FIGURES for end in ("low", "high"))])
    for row in rows:
        for domain in [*DOMAINS, "overall"]:
            later = [getattr(row, figure).get(domain) for figure in ("sr_supported", "fc_proven", "sr_proven")]
            bounds = [getattr(row, f"{figure}_ci95").get(domain) or [None, None] for figure in _INTERVAL_FIGURES]
            writer.writerow([row.coder, row.cua, row.mode, row.round, domain, row.tasks[domain],
                             _fraction(row.fc[domain]), _fraction(row.sr[domain]), row.commenter_mode or "",
                             *map(_fraction, later), row.proven_tasks.get(domain, ""),
                             _fraction(row.weighted.get(domain)),
                             *(_fraction(bound) for interval in bounds for bound in interval)])
    return buffer.getvalue()


def pass_counts(result: AppRoundResult) -> dict[str, tuple[int, int]]:
    """Per task of an app version: (repeats it passed, repeats) — the k of N behind pass^k."""
    return {tally.task_id: (tally.passed, tally.rollouts) for tally in task_tallies(result, {})}


def scoring_table(rows: list[TableRow]) -> list[dict]:
    """Per coder × CUA × mode × round: SR and the weighted score overall, SR per level, and their spread across repeats."""
    levels = [level for level in [*LEVELS, "none"] if any(level in row.sr_per_level for row in rows)]
    table = []
    for row in rows:
        spread = row.spread
        record = {"coder": row.coder, "cua": row.cua, "mode": row.mode, "commenter": _commenter(row.commenter_mode),
                  "round": row.round, "SR": pct(row.sr.get("overall")), "weighted": pct(row.weighted.get("overall")),
                  "SR_ci95": percent(row.sr_ci95.get("overall")), "weighted_ci95": percent(row.weighted_ci95.get("overall"))}
        record.update({f"SR {level}": pct(row.sr_per_level.get(level)) for level in levels})
        record.update({f"SR {level}_ci95": percent(row.sr_per_level_ci95.get(level)) for level in levels})
        if spread["repeats"] > 1:
            record["repeats"] = spread["repeats"]
            for label, name in (("SR", "sr"), ("weighted", "weighted")):
                record[f"{label} mean ± std"] = f"{pct(spread[f'{name}_mean'])} ± {pct(spread[f'{name}_std'])}"
                record[f"{label} min–max"] = f"{pct(spread[f'{name}_min'])}–{pct(spread[f'{name}_max'])}"
        table.append(record)
    return table


SCORING_NOTE = ("Weighted score = Σ w·passed / Σ w·n over tasks (and repeats), w the task's level's weight (paper 0.5, "
                "wood 1, bronze 2, silver 4, gold 8 by default; 1 for a task without a level); a task passes when every "
                "one of its checks passes. SR per level is over all domains; 'none' = tasks without a level. With "
                "repeats: mean ± population std and min–max across repeats.")
