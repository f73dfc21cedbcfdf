"""Reliability across variations (OpenApps' figures), pooled per coder × CUA × mode × round.

Which tasks each figure is over matters more here than anywhere: a variant may exclude a task it
breaks (its proof says why), so comparing raw SRs would compare different task sets. The headline
figures are therefore over the **common tasks**: per app, the tasks with a valid checker on the
default look that every variant of the row kept. Beside them, each variation's SR over its own
kept tasks. Across variations: mean, population std, MAD (median absolute deviation from the
median), min–max of the common-task SRs; within a variation: the std of its SR across repeats,
averaged over the variations. OpenApps' rule of thumb flags a reliability gap when the spread
across variations is more than twice the spread within one (undecided with a single repeat).
Failure modes are counted over every rollout of a variation (all repeats, its kept tasks).
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Iterable

from pydantic import BaseModel, Field

from ._error_bars import rate_interval, rounded, with_interval
from ._format import pct, track_text
from ._outcomes import _OneTrack, AppRoundResult, TaskOutcome

GAP_FACTOR = 2.0


class VariationRow(_OneTrack, BaseModel):
    coder: str
    cua: str
    mode: str
    commenter_mode: str | None = None
    round: int
    variations: list[str] = Field(description="`default` first, then the run's other variations.")
    tasks_common: int = Field(description="Tasks (over apps) that every variation kept: the headline figures' denominator.")
    tasks_valid: int = Field(description="Tasks with a valid checker on the default look.")
    repeats: int = 1
    sr: dict[str, float | None] = Field(description="SR over the common tasks, every repeat pooled.")
    sr_kept: dict[str, float | None] = Field(description="SR over each variation's own kept tasks, every repeat pooled.")
    sr_ci95: dict[str, list[float] | None] = Field(default_factory=dict, description=(
        "SR's 95 % interval over the common tasks, [low, high] fractions (Wilson; with repeats, the bootstrap over "
        "tasks: `results._error_bars`)."))
    sr_kept_ci95: dict[str, list[float] | None] = Field(default_factory=dict, description=(
        "SR (kept)'s 95 % interval over the variation's own kept tasks."))
    kept: dict[str, int] = Field(default_factory=dict, description="Tasks each variation kept (over apps).")
    excluded: dict[str, int] = Field(default_factory=dict, description="Tasks each variation's proof excluded (over apps).")
    sr_repeats: dict[str, list[float]] = Field(default_factory=dict, description="SR over the common tasks per repeat.")
    mean: float | None = None
    std: float | None = Field(default=None, description="Across variations (population std of `sr`).")
    mad: float | None = Field(default=None, description="Across variations: median |sr − median(sr)|.")
    min: float | None = None
    max: float | None = None
    std_within: float | None = Field(default=None, description="Mean over variations of the std across repeats; None "
                                     "with one repeat.")
    reliability_gap: bool | None = Field(default=None, description=f"std across > {GAP_FACTOR:g} × std within "
                                         "(OpenApps' rule of thumb); None with one repeat.")
    rollouts: dict[str, int] = Field(default_factory=dict, description="Rollouts per variation (kept tasks × repeats).")
    failures: dict[str, int] = Field(default_factory=dict, description="Failed rollouts per variation.")
    failure_modes: dict[str, dict[str, int]] = Field(default_factory=dict, description="Variation → mode → rollouts showing it.")
    by_app: dict[str, dict[str, float | None]] = Field(default_factory=dict, description="App → variation → SR over the "
                                                       "app's common tasks (the heatmap).")
    by_app_n: dict[str, dict[str, int]] = Field(default_factory=dict, description="App → variation → rollouts behind "
                                                "`by_app`'s figure (the app's common tasks × repeats): each cell's n.")
    errors: dict[str, str] = Field(default_factory=dict, description="Variations that could not be made, and why.")


def gap_label(row: VariationRow) -> str:
    """yes / no / ? (one repeat: no spread within a variation to compare with)."""
    return "?" if row.reliability_gap is None else ("yes" if row.reliability_gap else "no")


def _variations_of(result: AppRoundResult) -> dict[str, list[tuple[int, list[TaskOutcome]]]]:
    """Variation → its (repeat, outcomes) lists, the default look's over its tasks with a valid checker."""
    found = {"default": [(repeat, [t for t in outcomes if t.checker_valid]) for repeat, outcomes in result.every_repeat()]}
    for variation in result.variations:
        if variation.error is None:
            found[variation.variation] = variation.every_repeat()
    return found


def variation_rows(results: list[AppRoundResult]) -> list[VariationRow]:
    """One row per coder × CUA × mode × round of the results that have other variations (none: [])."""
    grouped: dict[tuple, list[AppRoundResult]] = defaultdict(list)
    for result in results:
        if result.variations:
            grouped[(*result.track_key, result.round)].append(result)
    return [_row(key, group) for key, group in sorted(grouped.items())]


def _row(key: tuple, group: list[AppRoundResult]) -> VariationRow:
    coder, cua, mode, commenter, round_ = key
    names = ["default"]
    for result in group:
        names += [v.variation for v in result.variations if v.variation not in names]
    # variation → (app, task) → [passes, rollouts]: over the common tasks, and over the variation's own kept tasks
    common_tasks: dict[str, dict[tuple, list[int]]] = defaultdict(dict)
    kept_tasks: dict[str, dict[tuple, list[int]]] = defaultdict(dict)
    per_repeat: dict[str, dict[int, list[int]]] = defaultdict(dict)  # variation → repeat → the same, common tasks
    kept, excluded = defaultdict(int), defaultdict(int)
    modes: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    by_app: dict[str, dict[str, float | None]] = {}
    by_app_n: dict[str, dict[str, int]] = {}
    errors: dict[str, str] = {}
    tasks_common = tasks_valid = 0
    repeats = 1
    for result in group:
        seen = _variations_of(result)
        for variation in result.variations:
            excluded[variation.variation] += len(variation.excluded)
            if variation.error is not None:
                errors.setdefault(variation.variation, variation.error)
        valid = {t.task_id for t in result.tasks if t.checker_valid}
        tasks_valid += len(valid)
        common = set(valid)
        for looks in seen.values():
            common &= {t.task_id for t in looks[0][1]} if looks else set()
        tasks_common += len(common)
        in_app = {name: [0, 0] for name in seen}  # this app's common tasks
        for name, looks in seen.items():
            repeats = max(repeats, len(looks))
            kept[name] += len(looks[0][1]) if looks else 0
            for repeat, outcomes in looks:
                for task in outcomes:
                    _add(kept_tasks[name], (result.app_id, task.task_id), task.passed)
                    for failure in task.failure_modes:
                        modes[name][failure] += 1
                    if task.task_id in common:
                        _add(common_tasks[name], (result.app_id, task.task_id), task.passed)
                        _add(per_repeat[name], repeat, task.passed)
                        _add(in_app, name, task.passed)
        by_app[result.app_id] = {name: _ratio([counts]) for name, counts in in_app.items()}
        by_app_n[result.app_id] = {name: n for name, (_, n) in in_app.items()}
    sr = {name: _ratio(common_tasks[name].values()) for name in names}
    sr_repeats = {name: [k / n for _, (k, n) in sorted(per_repeat[name].items())] for name in names}
    values = [value for value in sr.values() if value is not None]
    within = [statistics.pstdev(v) for v in sr_repeats.values() if len(v) > 1]
    rollouts = {name: sum(n for _, n in kept_tasks[name].values()) for name in names}
    row = VariationRow(
        coder=coder, cua=cua, mode=mode, commenter_mode=commenter or None, round=round_, variations=names,
        tasks_common=tasks_common, tasks_valid=tasks_valid, repeats=repeats, sr=sr,
        sr_kept={name: _ratio(kept_tasks[name].values()) for name in names},
        kept={name: kept[name] for name in names}, excluded={name: excluded[name] for name in names},
        sr_repeats=sr_repeats, rollouts=rollouts,
        failures={name: rollouts[name] - sum(k for k, _ in kept_tasks[name].values()) for name in names},
        failure_modes={name: dict(modes[name]) for name in names}, by_app=by_app, by_app_n=by_app_n,
        errors=errors, sr_ci95={name: _interval(common_tasks[name]) for name in names},
        sr_kept_ci95={name: _interval(kept_tasks[name]) for name in names})
    if values:
        median = statistics.median(values)
        row.mean, row.std = statistics.fmean(values), statistics.pstdev(values)
        row.mad = statistics.median(abs(v - median) for v in values)
        row.min, row.max = min(values), max(values)
    if within:
        row.std_within = statistics.fmean(within)
        row.reliability_gap = row.std > GAP_FACTOR * row.std_within if row.std is not None else None
    return row


def _add(counts: dict, key: object, passed: bool) -> None:
    entry = counts.setdefault(key, [0, 0])
    entry[0] += passed
    entry[1] += 1


def _interval(tasks: dict[tuple, list[int]]) -> list[float] | None:
    return rounded(rate_interval((key, k, n) for key, (k, n) in tasks.items()))


def _ratio(counts: Iterable[list[int]]) -> float | None:
    """Σ passes / Σ rollouts of [passes, rollouts] pairs; None without a rollout."""
    counts = list(counts)
    total = sum(n for _, n in counts)
    return sum(k for k, _ in counts) / total if total else None


VARIATION_NOTE = (
    "SR per variation is over the common tasks (per app, the tasks with a valid checker on the default look that every "
    "variant kept; a variant excludes a task its proof shows it breaks), every repeat pooled; 'kept' is each variation's "
    "SR over its own kept tasks. Across variations: mean, population std, MAD (median absolute deviation) and min–max; "
    "within: the std across repeats, averaged over variations. Gap = std across > 2 × std within (OpenApps' rule of "
    "thumb; '?' with one repeat). Failure modes count rollouts (all repeats) showing each mode. [low, high]: the SR's "
    "95 % interval over the same tasks (Wilson; with repeats, a bootstrap over tasks with the repeats inside).")


def variation_markdown(rows: list[VariationRow]) -> str:
    """Per row: SR per variation (common tasks; own kept tasks in brackets), the spread and the failure modes."""
    lines = []
    for row in rows:
        lines += [f"**{track_text(row.track_key)} · round {row.round}** — {row.tasks_common} common tasks of "
                  f"{row.tasks_valid} with a valid checker, {row.repeats} repeat(s); across variations: mean "
                  f"{pct(row.mean)}, std {pct(row.std)}, MAD {pct(row.mad)}, min–max {pct(row.min)}–{pct(row.max)}; "
                  f"std within {pct(row.std_within)}; gap {gap_label(row)}", ""]
        modes = sorted({mode for found in row.failure_modes.values() for mode in found})
        header = ["variation", "SR (common)", "SR (kept)", "kept", "excluded", "rollouts", "failed", *modes]
        lines += ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        for name in row.variations:
            cells = [name, with_interval(pct(row.sr.get(name)), row.sr_ci95.get(name)),
                     with_interval(pct(row.sr_kept.get(name)), row.sr_kept_ci95.get(name)), str(row.kept.get(name, 0)),
                     str(row.excluded.get(name, 0)), str(row.rollouts.get(name, 0)), str(row.failures.get(name, 0)),
                     *(str(row.failure_modes.get(name, {}).get(mode, 0)) for mode in modes)]
            lines.append("| " + " | ".join(cells) + " |")
        for name, error in row.errors.items():
            lines.append(f"\n_{name}: not rolled out — {error}_")
        lines.append("")
    return "\n".join(lines).rstrip()
