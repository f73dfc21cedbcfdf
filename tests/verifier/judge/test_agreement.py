"""Agreement figures between two judges, against fixtures computed by hand, and their degenerate cases."""

from __future__ import annotations

import math
import warnings

import pytest

from verifier.judge import agreement


def _judge(**decisions):
    return dict(decisions)


# Ten trajectories both judges decided, plus one the other judge left unsure and one each judge alone saw.
#   reference: a..f success (6), g..j failure (4)
#   other:     a b c d success, e f failure | g success, h i j failure | k unsure ; l seen only by other
REFERENCE = _judge(a=True, b=True, c=True, d=True, e=True, f=True, g=False, h=False, i=False, j=False, k=True, m=False)
OTHER = _judge(a=True, b=True, c=True, d=True, e=False, f=False, g=True, h=False, i=False, j=False, k=None, l=True)


def test_figures_equal_the_hand_computed_fixture():
    pair = agreement(REFERENCE, OTHER, "checker", "judge")
    # Confusion (reference rows, other columns): SS = a,b,c,d = 4; SF = e,f = 2; FS = g = 1; FF = h,i,j = 3; n = 10.
    assert (pair.confusion.success_success, pair.confusion.success_failure,
            pair.confusion.failure_success, pair.confusion.failure_failure) == (4, 2, 1, 3)
    assert pair.n == 10
    assert pair.left_out_unsure == 1  # k: both saw it, other said None
    assert pair.left_out_missing == 2  # l (other only) and m (reference only)
    # p_o = (4 + 3) / 10 = 0.7
    assert pair.agreement == pytest.approx(0.7)
    # reference success share 6/10, other success share 5/10:
    # p_e = 0.6·0.5 + 0.4·0.5 = 0.30 + 0.20 = 0.5;  κ = (0.7 − 0.5) / (1 − 0.5) = 0.4
    assert pair.kappa == pytest.approx(0.4)
    assert pair.kappa_note is None
    # recall on reference successes 4/6, on reference failures 3/4; balanced accuracy = (0.6667 + 0.75) / 2 = 0.708333…
    assert pair.recall_on_success == pytest.approx(4 / 6)
    assert pair.recall_on_failure == pytest.approx(3 / 4)
    assert pair.balanced_accuracy == pytest.approx(17 / 24)
    assert pair.balanced_accuracy_note is None
    assert pair.disagreements == ["e", "f", "g"]
    assert pair.reference_success_other_failure == ["e", "f"] and pair.reference_failure_other_success == ["g"]
    assert (pair.reference, pair.other, pair.reason) == ("checker", "judge", None)


def test_balanced_accuracy_takes_the_reference_side_and_kappa_is_symmetric():
    forward, backward = agreement(REFERENCE, OTHER), agreement(OTHER, REFERENCE)
    assert backward.kappa == pytest.approx(forward.kappa) and backward.agreement == pytest.approx(forward.agreement)
    # With OTHER as the reference: its successes a,b,c,d,g → recall 4/5; its failures e,f,h,i,j → recall 3/5.
    assert backward.balanced_accuracy == pytest.approx((4 / 5 + 3 / 5) / 2)
    assert backward.confusion.success_failure == 1 and backward.confusion.failure_success == 2


def test_perfect_agreement_is_kappa_one_and_total_disagreement_kappa_minus_one():
    both = _judge(a=True, b=False, c=True)
    assert agreement(both, both).kappa == pytest.approx(1.0)
    # [S, F] vs [F, S]: p_o = 0, p_e = 0.5·0.5 + 0.5·0.5 = 0.5, κ = (0 − 0.5) / 0.5 = −1
    flipped = agreement(_judge(a=True, b=False), _judge(a=False, b=True))
    assert flipped.kappa == pytest.approx(-1.0) and flipped.agreement == 0.0 and flipped.balanced_accuracy == 0.0


@pytest.mark.parametrize("value", [True, False])
def test_one_class_only_in_both_leaves_kappa_undefined_but_agreement_defined(value):
    pair = agreement(_judge(a=value, b=value, c=value), _judge(a=value, b=value, c=value))
    # p_e = 1·1 + 0·0 = 1, so κ = 0/0.
    assert pair.kappa is None and pair.kappa_note == "undefined: one class only"
    assert pair.agreement == 1.0 and pair.n == 3
    assert pair.balanced_accuracy == 1.0
    side = "successes" if value else "failures"
    assert pair.balanced_accuracy_note.startswith(f"recall on the reference's {side} only")


def test_a_reference_with_one_class_gives_the_recall_of_that_class_with_a_note():
    # reference all success (3); other: a success, b and c failure.
    pair = agreement(_judge(a=True, b=True, c=True), _judge(a=True, b=False, c=False))
    # p_o = 1/3; p_e = 1·(1/3) + 0·(2/3) = 1/3; κ = (1/3 − 1/3) / (2/3) = 0
    assert pair.kappa == pytest.approx(0.0) and pair.kappa_note is None
    assert pair.balanced_accuracy == pytest.approx(1 / 3)  # recall on successes only: 1 of 3
    assert pair.recall_on_failure is None
    assert "no failures" in pair.balanced_accuracy_note


def test_an_other_judge_with_one_class_is_half_balanced_accuracy():
    # reference a,b success, c failure; other says success to all: recall 1.0 on successes, 0.0 on failures.
    pair = agreement(_judge(a=True, b=True, c=False), _judge(a=True, b=True, c=True))
    assert pair.balanced_accuracy == pytest.approx(0.5) and pair.balanced_accuracy_note is None
    # p_o = 2/3; p_e = (2/3)·1 + (1/3)·0 = 2/3; κ = 0
    assert pair.kappa == pytest.approx(0.0)


def test_everything_unsure_is_n_zero_with_every_figure_none_and_a_reason():
    pair = agreement(_judge(a=None, b=True, c=None), _judge(a=True, b=None, c=None))
    assert pair.n == 0 and pair.left_out_unsure == 3 and pair.left_out_missing == 0
    assert (pair.agreement, pair.kappa, pair.balanced_accuracy, pair.recall_on_success, pair.recall_on_failure) == (None,) * 5
    assert "no trajectory decided by both" in pair.reason and "3 left out as unsure" in pair.reason
    assert pair.disagreements == [] and pair.confusion.success_success == 0


def test_no_shared_trajectory_is_n_zero_with_the_missing_counted():
    pair = agreement(_judge(a=True), _judge(b=False))
    assert pair.n == 0 and pair.left_out_missing == 2 and pair.agreement is None
    assert "2 seen by one judge only" in pair.reason
    empty = agreement({}, {})
    assert empty.n == 0 and empty.kappa is None and empty.reason


@pytest.mark.parametrize("reference, other", [
    (REFERENCE, OTHER),
    (_judge(a=True, b=True, c=True), _judge(a=True, b=False, c=False)),  # the reference has one class only
    (_judge(a=True, b=True, c=False), _judge(a=True, b=True, c=True)),    # the other judge has one class only
    (_judge(a=True, b=True), _judge(a=True, b=True)),                     # one class only in both: κ undefined
])
def test_kappa_and_balanced_accuracy_match_scikit_learn_when_it_is_installed(reference, other):
    metrics = pytest.importorskip("sklearn.metrics")  # an optional cross-check; scikit-learn is not a dependency
    both = sorted(t for t in reference.keys() & other.keys() if reference[t] is not None and other[t] is not None)
    truth, said = [reference[t] for t in both], [other[t] for t in both]
    pair = agreement(reference, other)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scikit-learn warns on one class and returns nan for κ = 0/0
        expected_kappa = metrics.cohen_kappa_score(truth, said)
        expected_balanced = metrics.balanced_accuracy_score(truth, said)
    if math.isnan(expected_kappa):
        assert pair.kappa is None
    else:
        assert pair.kappa == pytest.approx(expected_kappa)
    assert pair.balanced_accuracy == pytest.approx(expected_balanced)
