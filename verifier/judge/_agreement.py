"""How far two judges agree on the same trajectories (the paper's Table 6, OSUniverse's validator vs human).

A judge is a mapping trajectory_id → True (success) | False (failure) | None (unsure, no answer, an
error). Figures are computed over the trajectories **both** judges decided; the others are counted
as left out. With `reference` as the rows and `other` as the columns of the 2×2 confusion matrix:

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

from collections.abc import Mapping

from pydantic import BaseModel, Field

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
    counts = ConfusionMatrix()
    for trajectory in both:
        cell = f"{'success' if reference[trajectory] else 'failure'}_{'success' if other[trajectory] else 'failure'}"
        setattr(counts, cell, getattr(counts, cell) + 1)
    pair.confusion = counts
    pair.reference_success_other_failure = [t for t in both if reference[t] and not other[t]]
    pair.reference_failure_other_success = [t for t in both if not reference[t] and other[t]]
    pair.disagreements = sorted(pair.reference_success_other_failure + pair.reference_failure_other_success)
    n = len(both)
    agree = counts.success_success + counts.failure_failure
    pair.agreement = agree / n
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
