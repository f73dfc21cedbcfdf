"""Error bars of the results: a 95 % interval for every FC, SR and weighted score, and paired comparisons.

Which interval (the formulas are in `results._intervals`):

- FC and FC proven count each task once (repeat 0), over all tasks: Wilson.
- SR, SR (supported), SR (proven), SR per level and the weighted score, over the tasks their figure
  is over (all tasks; those with a valid checker; those with a proven checker; the level's tasks):
  with one rollout per task, Wilson on k of n (the weighted score: Wilson with Kish's effective n);
  with repeats, the seeded percentile bootstrap over tasks, each task bringing all its repeats —
  except where every rollout failed (or passed): a bootstrap can then only say [0, 0] (or [1, 1]),
  so Wilson over the tasks, each counted once, is used.

Paired comparisons (`Comparison`) put two configurations side by side on the tasks both judged —
round r vs round 0 and vs round r − 1 of a track, and two tracks that differ in one setting (CUA,
coder, revision mode or commenter mode) at the same round: the SR difference in points with its
95 % interval (Newcombe's square-and-add for one run; the paired bootstrap over tasks with
repeats), the tasks gained and lost, and the exact McNemar p-value. With repeats a task is
"gained" when its pass rate over the repeats rose and "lost" when it fell, and p is the exact sign
test on those counts, which is McNemar's test itself when every task ran once. The p-values are
not corrected for the number of comparisons a sweep makes.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, Field

from ._intervals import (
    BOOTSTRAP_RESAMPLES,
    BOOTSTRAP_SEED,
    LEVEL,
    Interval,
    bootstrap_paired_difference_interval,
    bootstrap_ratio_interval,
    effective_wilson_interval,
    mcnemar_exact_p,
    paired_difference_interval,
    wilson_interval,
)
from ._format import track_text
from ._outcomes import AppRoundResult, TaskOutcome

ERROR_BARS = {
    "level": LEVEL,
    "fc": "Wilson score interval over all tasks (each task counted once)",
    "one_run": "Wilson score interval on k of n (the weighted score: Wilson with Kish's effective n = (Σw)² / Σw²)",
    "repeats": f"percentile bootstrap over tasks, each with all its repeats (Σk / Σn per resample), "
               f"{BOOTSTRAP_RESAMPLES} resamples, seed {BOOTSTRAP_SEED}; where every rollout failed (or passed), "
               "Wilson on the tasks",
    "paired_one_run": "Newcombe's square-and-add interval for paired proportions (Newcombe 1998, method 10)",
    "paired_repeats": f"paired percentile bootstrap over tasks, {BOOTSTRAP_RESAMPLES} resamples, seed {BOOTSTRAP_SEED}",
    "test": "exact two-sided McNemar test on the tasks gained and lost (with repeats: the exact sign test on the "
            "tasks whose pass rate rose or fell); not corrected for multiple comparisons",
}
"""What results.json's `_ci95` fields and comparisons are, written beside them (`error_bars`)."""

INTERVAL_NOTE = ("[low, high] = 95 % interval: Wilson for one run (FC always; the weighted score with Kish's effective "
                 f"n); with repeats, a bootstrap over tasks with the repeats inside ({BOOTSTRAP_RESAMPLES} resamples, "
                 f"seed {BOOTSTRAP_SEED}; Wilson on the tasks where every rollout failed or every one passed). Each is "
                 "over the tasks its figure is over.")

COMPARISON_NOTE = ("SR difference in points on the tasks both sides judged, with its 95 % interval (Newcombe's "
                   "square-and-add for one run; a paired bootstrap over tasks with repeats); p: exact McNemar test on "
                   "the tasks gained and lost (with repeats: the sign test on tasks whose pass rate rose or fell); "
                   "not corrected for the number of comparisons.")


@dataclass(frozen=True)
class TaskTally:
    """One task of one app version, over all its repeats: what each figure of its cell counts."""

    app_id: str
    task_id: str
    level: str
    weight: float
    valid: bool  # a valid checker in repeat 0 (every repeat judges with the same checkers)
    proven: bool
    has_proof: bool
    passed: int
    rollouts: int
    valid_rollouts: int
    proven_passed: int
    proven_rollouts: int


def task_tallies(result: AppRoundResult, weights: Mapping[str, float]) -> list[TaskTally]:
    """Each task of `result` (repeat 0's order), its outcomes of every repeat added up."""
    runs: dict[str, list[TaskOutcome]] = {}
    for _, outcomes in result.every_repeat():
        for task in outcomes:
            runs.setdefault(task.task_id, []).append(task)
    first = {task.task_id: task for task in result.tasks}
    tallies = []
    for task_id, found in runs.items():
        task = first.get(task_id)
        level = (task.level if task else None) or "none"
        proven = [t for t in found if t.proof == "proven"]
        tallies.append(TaskTally(
            app_id=result.app_id, task_id=task_id, level=level,
            weight=weights.get(level, 1.0) if level != "none" else 1.0,
            valid=bool(task and task.checker_valid), proven=bool(task and task.proof == "proven"),
            has_proof=bool(task and task.proof is not None), passed=sum(t.passed for t in found), rollouts=len(found),
            valid_rollouts=sum(t.checker_valid for t in found), proven_passed=sum(t.passed for t in proven),
            proven_rollouts=len(proven)))
    return tallies


def rate_interval(counts: Iterable[tuple[tuple, int, int]]) -> Interval | None:
    """The 95 % interval of Σk / Σn over items (key, k, n): Wilson when every item ran once, else the
    bootstrap over items (in key order, so the draw does not depend on how results were listed).

    Where every rollout failed (or every one passed) a resample can only give 0 (or 1), and the bootstrap
    would claim [0, 0]: then every repeat agreed, the run holds one task's worth of evidence per task,
    and Wilson on 0 (or all) of the tasks is the honest interval."""
    items = sorted((key, k, n) for key, k, n in counts if n > 0)
    if not items:
        return None
    if all(n == 1 for _, _, n in items) or all(k == 0 for _, k, _ in items) or all(k == n for _, k, n in items):
        return wilson_interval(sum(k == n for _, k, n in items), len(items))
    return bootstrap_ratio_interval([k for _, k, _ in items], [n for _, _, n in items])


def cell_intervals(tallies: list[TaskTally]) -> dict[str, Interval | None]:
    """One domain's (or the whole row's) intervals: fc, fc_proven, sr, sr_supported, sr_proven, weighted."""
    if not tallies:
        return dict.fromkeys(("fc", "fc_proven", "sr", "sr_supported", "sr_proven", "weighted"))
    key = lambda t: (t.app_id, t.task_id)  # noqa: E731 - the order of the bootstrap's items
    return {
        "fc": wilson_interval(sum(t.valid for t in tallies), len(tallies)),
        "fc_proven": (wilson_interval(sum(t.proven for t in tallies), len(tallies))
                      if any(t.has_proof for t in tallies) else None),
        "sr": rate_interval((key(t), t.passed, t.rollouts) for t in tallies),
        "sr_supported": rate_interval((key(t), t.passed, t.valid_rollouts) for t in tallies),
        "sr_proven": rate_interval((key(t), t.proven_passed, t.proven_rollouts) for t in tallies),
        "weighted": weighted_interval(tallies),
    }


def weighted_interval(tallies: list[TaskTally]) -> Interval | None:
    """The weighted score's interval: Wilson with Kish's effective n for one run, the bootstrap with repeats."""
    counted = sorted((((t.app_id, t.task_id), t) for t in tallies if t.weight > 0 and t.rollouts > 0),
                     key=lambda pair: pair[0])
    if not counted:
        return None
    # one run, or repeats that all agree (none passed, or all did: see `rate_interval`)
    if all(t.rollouts == 1 for _, t in counted) or all(t.passed == 0 for _, t in counted) \
            or all(t.passed == t.rollouts for _, t in counted):
        weights = [t.weight for _, t in counted]
        score = sum(t.weight * (t.passed == t.rollouts) for _, t in counted) / sum(weights)
        return effective_wilson_interval(score, weights)
    return bootstrap_ratio_interval([t.weight * t.passed for _, t in counted], [t.weight * t.rollouts for _, t in counted])


def rounded(interval: Interval | None, digits: int = 6) -> list[float] | None:
    """An interval as results.json stores it: [low, high] fractions to 6 digits (fine enough that printing them to
    0.1 points rounds as the unrounded bounds would, but for a tie at the 7th digit)."""
    return None if interval is None else [round(interval[0], digits), round(interval[1], digits)]


def percent(interval: Interval | list[float] | None) -> list[float] | None:
    """A fraction interval in percent, one decimal (as the tables' figures)."""
    return None if interval is None else [round(100 * interval[0], 1), round(100 * interval[1], 1)]


def interval_text(interval: Interval | list[float] | None) -> str:
    """A fraction interval as the tables print it, in %: "[47.6, 66.4]" ("" without one)."""
    return "" if interval is None else f"[{100 * interval[0]:.1f}, {100 * interval[1]:.1f}]"


def with_interval(figure: str, interval: Interval | list[float] | None) -> str:
    """A figure and its interval: "57.3 [47.6, 66.4]" (the figure alone without an interval)."""
    text = interval_text(interval)
    return f"{figure} {text}" if text else figure


# ------------------------------------------------------------------------------------ paired comparisons


class Comparison(BaseModel):
    """SR of two configurations on the tasks both judged: `compared` − `baseline`, paired by task."""

    kind: Literal["rounds", "tracks"] = Field(description="rounds: two rounds of one track; tracks: two tracks that "
                                              "differ in one setting, at one round.")
    compared: str = Field(description="What is compared, e.g. 'round 1' or 'cua uitars'.")
    baseline: str = Field(description="What it is compared with, e.g. 'round 0' or 'cua heuristic'.")
    context: str = Field(description="What both share: the track (rounds) or the other settings and the round (tracks).")
    compared_track: str
    compared_round: int
    baseline_track: str
    baseline_round: int
    tasks: int = Field(description="Tasks (app × task id) both sides judged: the comparison's n.")
    repeats: bool = Field(description="Some task ran more than once: per-task pass rates, bootstrap, sign test.")
    sr_compared: float = Field(description="SR of `compared` over these tasks (repeats pooled).")
    sr_baseline: float
    difference: float = Field(description="sr_compared − sr_baseline, a fraction (× 100 = points).")
    difference_ci95: list[float] = Field(description="The difference's 95 % interval [low, high], fractions.")
    gained: int = Field(description="Tasks that pass in `compared` and fail in `baseline` (repeats: pass rate rose).")
    lost: int = Field(description="Tasks that fail in `compared` and pass in `baseline` (repeats: pass rate fell).")
    p_value: float = Field(description="Exact two-sided McNemar p (repeats: the exact sign test) on gained vs lost.")
    interval_method: str
    test: str

    def sentence(self) -> str:
        """E.g. "round 1 vs round 0: +11.6 points [4.1, 19.0], p = 0.004, 14 tasks gained, 2 lost (103 tasks)"."""
        return f"{self.compared} vs {self.baseline}: {self.summary()}"

    def summary(self) -> str:
        """The sentence after "… vs …: ", e.g. "+11.6 points [4.1, 19.0], p = 0.004, 14 tasks gained, 2 lost (103 tasks)"."""
        low, high = self.difference_ci95
        p = "p < 0.001" if self.p_value < 0.001 else f"p = {self.p_value:.3f}"
        return (f"{100 * self.difference:+.1f} points [{100 * low:.1f}, {100 * high:.1f}], {p}, "
                f"{self.gained} task{'s' * (self.gained != 1)} gained, {self.lost} lost "
                f"({self.tasks} tasks{', repeats pooled' if self.repeats else ''})")


_AXES = ("coder", "cua", "mode", "commenter_mode")
_AXIS_NAMES = {"coder": "coder", "cua": "cua", "mode": "mode", "commenter_mode": "commenter"}


def _per_task(results: list[AppRoundResult]) -> tuple[dict, dict]:
    """Track → round → (app, task) → (passes, rollouts); and track → round → app → its version's html sha256, to see
    shared rounds."""
    table: dict[tuple, dict[int, dict[tuple[str, str], tuple[int, int]]]] = defaultdict(lambda: defaultdict(dict))
    versions: dict[tuple, dict[int, dict[str, str]]] = defaultdict(lambda: defaultdict(dict))
    for result in results:
        versions[result.track_key][result.round][result.app_id] = result.html_sha
        cell = table[result.track_key][result.round]
        for tally in task_tallies(result, {}):
            cell[(result.app_id, tally.task_id)] = (tally.passed, tally.rollouts)
    return table, versions


def compare(compared_tasks: Mapping[tuple[str, str], tuple[int, int]],
            baseline_tasks: Mapping[tuple[str, str], tuple[int, int]], **labels) -> Comparison | None:
    """The paired comparison of two configurations' per-task (passes, rollouts), keyed by (app, task id); None
    without a common task. `labels`: the `Comparison` fields that name the two sides."""
    common = sorted(set(compared_tasks) & set(baseline_tasks))
    if not common:
        return None
    a = [compared_tasks[key] for key in common]
    b = [baseline_tasks[key] for key in common]
    repeats = any(n > 1 for _, n in a + b)
    rate_a = sum(k for k, _ in a) / sum(n for _, n in a)
    rate_b = sum(k for k, _ in b) / sum(n for _, n in b)
    gained = sum(ka / na > kb / nb for (ka, na), (kb, nb) in zip(a, b))
    lost = sum(ka / na < kb / nb for (ka, na), (kb, nb) in zip(a, b))
    if repeats and (gained or lost):
        interval = bootstrap_paired_difference_interval(a, b)
        method, test = ERROR_BARS["paired_repeats"], "exact sign test on tasks whose pass rate rose or fell"
    elif repeats:
        # No task's pass rate moved: every resample's difference is 0, so the bootstrap would claim [0, 0]. The
        # one-run interval of a table without changed tasks says what these many tasks allow (a task counts as
        # passing when it passed in at least half of its repeats, the same on both sides).
        both = sum(2 * ka >= na for ka, na in a)
        interval = paired_difference_interval(both, 0, 0, len(common) - both)
        method, test = ERROR_BARS["paired_one_run"] + " (no task changed, so no bootstrap)", "exact sign test"
    else:
        both = sum(ka and kb for (ka, _), (kb, _) in zip(a, b))
        interval = paired_difference_interval(both, gained, lost, len(common) - both - gained - lost)
        method, test = ERROR_BARS["paired_one_run"], "exact McNemar"
    return Comparison(**labels, tasks=len(common), repeats=repeats, sr_compared=rate_a, sr_baseline=rate_b,
                      difference=rate_a - rate_b, difference_ci95=rounded(interval), gained=gained, lost=lost,
                      p_value=mcnemar_exact_p(gained, lost), interval_method=method, test=test)


def comparisons(results: list[AppRoundResult]) -> list[Comparison]:
    """Every track's round r vs round 0 (and vs round r − 1 from round 2 on), then every two tracks that differ
    in one setting, at each round both have — except where they share the round's rollouts (round 0 of
    two modes of one coder × CUA is one set of rollouts: the same version judged by the same agent)."""
    per_task, versions = _per_task(results)
    found: list[Comparison | None] = []  # None: no common task
    for track, rounds in sorted(per_task.items()):
        label = track_text(track)
        for round_ in sorted(rounds):
            for earlier in dict.fromkeys(r for r in (0, round_ - 1) if 0 <= r < round_ and r in rounds):
                found.append(compare(rounds[round_], rounds[earlier], kind="rounds", compared=f"round {round_}",
                                     baseline=f"round {earlier}", context=label, compared_track=label,
                                     compared_round=round_, baseline_track=label, baseline_round=earlier))
    tracks = sorted(per_task)
    for i, first in enumerate(tracks):
        for second in tracks[i + 1:]:
            differing = [axis for axis, x, y in zip(_AXES, first, second) if x != y]
            # The `unsupported` mode does not comment: its commenter mode is empty, so mode and commenter differ together.
            if len(differing) != 1 and not (set(differing) == {"mode", "commenter_mode"} and not (first[3] and second[3])):
                continue
            axis = differing[0]
            index = _AXES.index(axis)
            shared = " · ".join(part for j, part in enumerate(first) if part and _AXES[j] not in differing)
            for round_ in sorted(set(per_task[first]) & set(per_task[second])):
                if first[1] == second[1] and versions[first][round_] == versions[second][round_]:
                    continue  # the same versions judged by the same agent: the same rollouts
                found.append(compare(per_task[second][round_], per_task[first][round_], kind="tracks",
                                     compared=f"{_AXIS_NAMES[axis]} {second[index]}",
                                     baseline=f"{_AXIS_NAMES[axis]} {first[index]}",
                                     context=f"{shared}, round {round_}" if shared else f"round {round_}",
                                     compared_track=track_text(second), compared_round=round_,
                                     baseline_track=track_text(first), baseline_round=round_))
    return [comparison for comparison in found if comparison is not None]


def comparison_lines(found: list[Comparison]) -> list[str]:
    """One line per comparison, grouped under what they share: "context — sentence"."""
    return [f"{comparison.context} — {comparison.sentence()}" for comparison in found]


def _beside(figure: object, interval: list[float] | None) -> str:
    return str(figure) if interval is None else f"{figure} [{interval[0]:.1f}, {interval[1]:.1f}]"


def shown_records(records: list[dict]) -> list[dict]:
    """Records of a summary table (by CUA, by commenter mode, scoring) as the tables show them: each `X_ci95`
    (in %) printed in column X after its figure — "57.3 [47.6, 66.4]" — and not as a column of its own. A cell
    "SR (FC)" gets both of its intervals: "<cell> SR_ci95" and "<cell> FC_ci95" (by commenter mode: "SR_ci95",
    "FC_ci95"), as "57.3 [47.6, 66.4] (100.0 [96.4, 100.0])"."""
    shown = []
    for record in records:
        out = {}
        for key, value in record.items():
            if key.endswith("_ci95"):
                continue
            sr_key, fc_key = ("SR_ci95", "FC_ci95") if key == "SR (FC)" else (f"{key} SR_ci95", f"{key} FC_ci95")
            if sr_key in record and isinstance(value, str) and " (" in value:
                sr, fc = value.split(" (", 1)
                value = f"{_beside(sr, record[sr_key])} ({_beside(fc.rstrip(')'), record.get(fc_key))})"
            elif f"{key}_ci95" in record:
                value = _beside(value, record[f"{key}_ci95"])
            out[key] = value
        shown.append(out)
    return shown
