"""GTArena's metrics against fixtures computed by hand, including the two degenerate detectors."""

from __future__ import annotations

import pytest

from commenter.detector import ERROR, UNTYPED, Detection, percent, score, score_detections

# 10 tuples with known ground truth: 4 defective (2 no-response, 1 misalignment, 1 content-error), 6 normal,
# plus 1 whose ground truth is unknown (left out of every figure).
TRUTH = ["no-response", "no-response", "misalignment", "content-error", "none", "none", "none", "none", "none", "none"]


def test_always_no_defect_has_recall_d_0_and_recall_n_100():
    metrics = score("never", [(truth, False, None) for truth in TRUTH] + [(None, True, "misalignment")])
    assert (metrics.overall.recall_d, metrics.overall.recall_n, metrics.overall.accuracy) == (0.0, 1.0, 0.6)
    assert metrics.unknown == 1 and metrics.overall.tuples == 10
    assert (percent(metrics.overall.recall_d), percent(metrics.overall.recall_n)) == ("0.0", "100.0")
    assert metrics.confusion["no-response"] == {"none": 2} and metrics.confusion["none"] == {"none": 6}


def test_always_defect_without_a_type_has_recall_d_100_recall_n_0_and_accuracy_0():
    metrics = score("always", [(truth, True, None) for truth in TRUTH])
    assert (metrics.overall.recall_d, metrics.overall.recall_n, metrics.overall.accuracy) == (1.0, 0.0, 0.0)
    assert metrics.overall.type_accuracy == 0.0
    assert metrics.confusion["none"] == {UNTYPED: 6}


def test_always_the_same_type_is_right_only_where_that_type_is_the_truth():
    metrics = score("always-no-response", [(truth, True, "no-response") for truth in TRUTH])
    assert metrics.overall.accuracy == pytest.approx(2 / 10)
    assert metrics.by_type["no-response"].type_accuracy == 1.0 and metrics.by_type["misalignment"].type_accuracy == 0.0
    assert metrics.confusion["misalignment"] == {"no-response": 1}


def test_a_mixed_detector_matches_the_hand_computed_figures():
    said = [(True, "no-response"), (False, None), (True, "uneven-spacing"), (True, "content-error"),
            (False, None), (False, None), (True, "misalignment"), (None, None), (False, None), (False, None)]
    metrics = score("mixed", [(truth, defect, kind) for truth, (defect, kind) in zip(TRUTH, said)], offline=True)
    overall = metrics.overall
    # defective: detected 3 of 4 (the second no-response missed), typed 2 (no-response, content-error)
    # normal: 6, called normal 4 (one called misalignment, one error)
    assert (overall.defective, overall.detected, overall.typed) == (4, 3, 2)
    assert (overall.normal, overall.cleared, overall.errors) == (6, 4, 1)
    assert overall.recall_d == pytest.approx(0.75) and overall.recall_n == pytest.approx(4 / 6)
    assert overall.accuracy == pytest.approx((2 + 4) / 10)
    display, interaction = metrics.by_kind["display"], metrics.by_kind["interaction"]
    # a kind's group: its defective tuples and every normal one
    assert (display.defective, display.detected, display.typed, display.normal) == (2, 2, 1, 6)
    assert (interaction.defective, interaction.detected, interaction.typed) == (2, 1, 1)
    assert interaction.recall_d == 0.5 and display.accuracy == pytest.approx((1 + 4) / 8)
    assert metrics.by_type["misalignment"].recall_d == 1.0 and metrics.by_type["misalignment"].type_accuracy == 0.0
    assert list(metrics.by_type) == ["content-error", "misalignment", "no-response"]  # the taxonomy's order
    assert metrics.confusion["none"] == {"none": 4, "misalignment": 1, ERROR: 1}
    assert metrics.confusion["misalignment"] == {"uneven-spacing": 1}
    assert metrics.rows == ["content-error", "misalignment", "no-response", "none"]


def test_detections_with_errors_are_scored_as_wrong_and_unknown_truth_is_left_out():
    detections = [Detection(trajectory="t", step=1, detector="d", defect=True, type="no-response", truth="no-response"),
                  Detection(trajectory="t", step=2, detector="d", defect=False, truth="none", error="model call failed"),
                  Detection(trajectory="t", step=3, detector="d", defect=False, truth=None)]
    metrics = score_detections("d", detections)
    assert (metrics.overall.tuples, metrics.overall.errors, metrics.unknown) == (2, 1, 1)
    assert metrics.overall.accuracy == 0.5 and metrics.overall.recall_n == 0.0


def test_an_unknown_ground_truth_type_is_refused_naming_it():
    with pytest.raises(ValueError, match="'wobbly'"):
        score("d", [("wobbly", True, None)])


def test_the_metrics_survive_a_round_trip_through_json():
    from commenter.detector import DetectorMetrics

    metrics = score("d", [(truth, truth != "none", truth if truth != "none" else None) for truth in TRUTH])
    again = DetectorMetrics.model_validate_json(metrics.model_dump_json())
    assert again.overall.accuracy == 1.0 and again.confusion == metrics.confusion and again.by_kind.keys() == {"display", "interaction"}
