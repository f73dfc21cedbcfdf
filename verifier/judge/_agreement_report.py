"""Every pair of a run's judges compared: the checker, each model/offline judge, and the people.

The judges of a run folder:

- **checker**: the task's checker on trajectories whose task had a valid checker (from results.json;
  the others are not the checker's to decide);
- one judge per (judge, mode) found in `judgements.jsonl`, named `<judge> judge (<mode>)`; the last
  line for a trajectory wins (a re-judged trajectory appends a newer line); `success: null` is None;
- **human**: people's labels of `labels.jsonl`, merged (`merged_labels`); `unsure` is None.

The reference of a pair (the truth for balanced accuracy) is the first of the two in the order
human, checker, then the judges by name: so checker vs a model judge (the paper's Table 6) and
human vs checker (OSUniverse's validator vs human).

How far two judges agree (`agreement`; the paper's Table 6, OSUniverse's validator vs human): a judge is a
mapping trajectory_id → True (success) | False (failure) | None (unsure, no answer, an error). Figures are
computed over the trajectories **both** judges decided; the others are counted as left out. With `reference`
as the rows and `other` as the columns of the 2×2 confusion matrix:

- agreement p_o = (both success + both failure) / n;
- Cohen's κ = (p_o − p_e) / (1 − p_e), p_e = Σ over classes of (reference's share × other's share).
  When p_e = 1 (both judges put every trajectory in the same one class) κ is 0/0: reported as None,
  "undefined: one class only" — the agreement is still defined (1.0);
- balanced accuracy of `other` against `reference` = the mean of other's recall on the reference's
  successes and on its failures. When the reference has one class only among the n, it is the recall
  on that class alone (what scikit-learn's `balanced_accuracy_score` returns), and a note says so;
- n = 0 (nothing decided by both): every figure is None, with the reason.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from ._labels import LabelConflict, label_conflicts, merged_labels, read_labels
from ._records import JUDGEMENTS_FILE, LABELS_FILE, Judgement, read_records, run_trajectories

AGREEMENT_FILE = "agreement.json"
CHECKER = "checker"
HUMAN = "human"

JudgeKind = Literal["checker", "model", "offline", "human"]
Decisions = Mapping[str, bool | None]


class ConfusionMatrix(BaseModel):
    """The 2×2 counts, the reference's decision first: `success_failure` = reference success, other failure."""

    success_success: int = 0
    success_failure: int = 0
    failure_success: int = 0
    failure_failure: int = 0


class PairAgreement(BaseModel):
    """Two judges compared over the trajectories both decided (`reference` is the one taken as truth
    for balanced accuracy; agreement and κ are symmetric)."""

    reference: str
    other: str
    n: int = Field(description="Trajectories both judges decided (success or failure).")
    left_out_unsure: int = Field(description="Trajectories both judges saw where at least one said None (unsure / no answer / error).")
    left_out_missing: int = Field(description="Trajectories only one of the two judges saw.")
    agreement: float | None = None
    kappa: float | None = Field(default=None, description="Cohen's κ; None when undefined (see `kappa_note`).")
    kappa_note: str | None = None
    balanced_accuracy: float | None = Field(default=None, description="Of `other` against `reference`.")
    balanced_accuracy_note: str | None = None
    recall_on_success: float | None = Field(default=None, description="Share of the reference's successes `other` called success.")
    recall_on_failure: float | None = Field(default=None, description="Share of the reference's failures `other` called failure.")
    confusion: ConfusionMatrix = Field(default_factory=ConfusionMatrix)
    disagreements: list[str] = Field(default_factory=list, description="Trajectory ids the two decided differently, sorted.")
    reference_success_other_failure: list[str] = Field(default_factory=list, description="The disagreements of that kind.")
    reference_failure_other_success: list[str] = Field(default_factory=list, description="The disagreements of that kind.")
    reason: str | None = Field(default=None, description="Why every figure is None (n = 0).")


def agreement(reference: Decisions, other: Decisions, reference_name: str = "reference", other_name: str = "other") -> PairAgreement:
    """Agreement, Cohen's κ, balanced accuracy and the confusion matrix of `other` against `reference`, over the
    trajectories both decided (degenerate cases as the module docstring defines them); never raises on empty input."""
    shared = reference.keys() & other.keys()
    both = sorted(t for t in shared if reference[t] is not None and other[t] is not None)
    pair = PairAgreement(reference=reference_name, other=other_name, n=len(both),
                         left_out_unsure=len(shared) - len(both), left_out_missing=len(reference.keys() ^ other.keys()))
    if not both:
        pair.reason = (f"no trajectory decided by both ({pair.left_out_unsure} left out as unsure, "
                       f"{pair.left_out_missing} seen by one judge only)")
        return pair
    pair.confusion = counts = ConfusionMatrix(**Counter(
        f"{'success' if reference[t] else 'failure'}_{'success' if other[t] else 'failure'}" for t in both))
    pair.reference_success_other_failure = [t for t in both if reference[t] and not other[t]]
    pair.reference_failure_other_success = [t for t in both if not reference[t] and other[t]]
    pair.disagreements = sorted(pair.reference_success_other_failure + pair.reference_failure_other_success)
    n = len(both)
    pair.agreement = (counts.success_success + counts.failure_failure) / n
    pair.kappa, pair.kappa_note = _kappa(counts, n)
    reference_success = counts.success_success + counts.success_failure
    reference_failure = counts.failure_success + counts.failure_failure
    if reference_success:
        pair.recall_on_success = counts.success_success / reference_success
    if reference_failure:
        pair.recall_on_failure = counts.failure_failure / reference_failure
    recalls = [r for r in (pair.recall_on_success, pair.recall_on_failure) if r is not None]
    pair.balanced_accuracy = sum(recalls) / len(recalls)
    if not reference_failure:
        pair.balanced_accuracy_note = "recall on the reference's successes only: the reference has no failures"
    elif not reference_success:
        pair.balanced_accuracy_note = "recall on the reference's failures only: the reference has no successes"
    return pair


def _kappa(counts: ConfusionMatrix, n: int) -> tuple[float | None, str | None]:
    # In integers, so p_e = 1 is found exactly: κ = (n·agree − S) / (n² − S), S = n²·p_e.
    reference_success = counts.success_success + counts.success_failure
    other_success = counts.success_success + counts.failure_success
    chance = reference_success * other_success + (n - reference_success) * (n - other_success)
    if chance == n * n:
        return None, "undefined: one class only"
    agree = counts.success_success + counts.failure_failure
    return (n * agree - chance) / (n * n - chance), None


class JudgeSummary(BaseModel):
    """One judge of the run and how much it decided."""

    name: str
    kind: JudgeKind
    decided: int = Field(description="Trajectories it called success or failure.")
    undecided: int = Field(description="Trajectories it saw and left None (unsure, no answer, an error).")


class AgreementReport(BaseModel):
    """The judges of a run and every pair of them compared (`agreement.json`)."""

    sources: list[str] = Field(default_factory=list, description="The judgement/label files found in the run folder.")
    judges: list[JudgeSummary] = Field(default_factory=list)
    pairs: list[PairAgreement] = Field(default_factory=list)
    label_conflicts: list[LabelConflict] = Field(default_factory=list, description="Trajectories people labelled both success and failure.")
    dashboards: dict[str, str] = Field(default_factory=dict, description=(
        "Dashboard (relative to the run folder) of each trajectory listed in a disagreement or a conflict."))
    problems: list[str] = Field(default_factory=list, description="Lines skipped or records ignored, each naming its file.")

    @property
    def empty(self) -> bool:
        """True when the run has neither judgements.jsonl nor labels.jsonl: nothing to compare."""
        return not self.sources


def agreement_report(run_dir: Path | str) -> AgreementReport:
    """Compare every two judges of a finished run (see the module docstring for who they are).

    Empty (no judges, no pairs) when the folder has neither judgements.jsonl nor labels.jsonl. Torn
    or invalid lines and records about trajectories not in the run are skipped and listed in
    `problems`, never fatal.

    Raises:
        FileNotFoundError / ValueError: judgements or labels exist but results.json is missing or not JSON.
    """
    run_dir = Path(run_dir)
    sources = [name for name in (JUDGEMENTS_FILE, LABELS_FILE) if (run_dir / name).is_file()]
    if not sources:
        return AgreementReport()
    refs = {ref.trajectory_id: ref for ref in run_trajectories(run_dir)}
    decisions: dict[str, dict[str, bool | None]] = {CHECKER: {t: r.checker_success for t, r in refs.items() if r.checker_valid}}
    kinds: dict[str, JudgeKind] = {CHECKER: "checker"}
    problems: list[str] = []

    judgements, skipped = read_records(run_dir / JUDGEMENTS_FILE, Judgement)
    problems += skipped
    judged: dict[str, dict[str, bool | None]] = {}
    for judgement in _in_run(judgements, refs, run_dir / JUDGEMENTS_FILE, problems):
        name = f"{judgement.judge} judge ({judgement.mode})"
        judged.setdefault(name, {})[judgement.trajectory_id] = judgement.success  # file order: the last line wins
        kinds[name] = "offline" if judgement.offline else "model"

    read = read_labels(run_dir)
    problems += read.problems
    labels = _in_run(read.labels, refs, run_dir / LABELS_FILE, problems)
    conflicts = label_conflicts(labels)
    if labels:
        merged = merged_labels(labels)
        decisions[HUMAN] = {t: None if value == "unsure" else value == "success" for t, value in merged.items()}
        kinds[HUMAN] = "human"
    decisions.update(sorted(judged.items()))

    order = [name for name in (HUMAN, CHECKER) if name in decisions] + sorted(judged)
    pairs = [agreement(decisions[reference], decisions[other], reference, other)
             for index, reference in enumerate(order) for other in order[index + 1:]]
    listed = {t for pair in pairs for t in pair.disagreements} | {c.trajectory_id for c in conflicts}
    return AgreementReport(
        sources=sources,
        judges=[JudgeSummary(name=name, kind=kinds[name], decided=sum(v is not None for v in decisions[name].values()),
                             undecided=sum(v is None for v in decisions[name].values())) for name in order],
        pairs=pairs,
        label_conflicts=conflicts,
        dashboards={t: refs[t].dashboard for t in sorted(listed) if refs[t].dashboard},
        problems=problems,
    )


def _in_run(records: list, refs: dict, path: Path, problems: list[str]) -> list:
    """The records about trajectories of the run; one problem line for the others (they are ignored)."""
    unknown = sorted({record.trajectory_id for record in records if record.trajectory_id not in refs})
    if unknown:
        problems.append(f"{path}: {len(unknown)} trajectory id(s) not in this run's results.json ignored "
                        f"(e.g. '{unknown[0]}')")
    return [record for record in records if record.trajectory_id in refs]
