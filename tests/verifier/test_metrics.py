"""Function Completeness per app, domain and overall, and the SR rule it shares."""

from __future__ import annotations

from verifier import (
    AppVerdicts,
    GateResult,
    Verdict,
    completeness_summary,
    function_completeness,
    function_completeness_proven,
    success_outcomes,
    success_rate,
    success_rate_proven,
)


def app(app_id: str, domain: str, valid: int, invalid: int, proven: int = 0) -> AppVerdicts:
    """`valid` tasks with a checker that passed the gate, the first `proven` of them proven; `invalid` without."""
    passed = GateResult(accepted=True, kind="js", javascript="return false;")
    verdicts = [
        Verdict(task_id=f"ok-{i}", solvable=True, checker="return false;", gate=passed, model="m",
                proof="proven" if i < proven else "claimed")
        for i in range(valid)
    ] + [Verdict(task_id=f"no-{i}", solvable=False, reasons=["missing control"], model="m") for i in range(invalid)]
    return AppVerdicts(app_id=app_id, domain=domain, html_sha256="0" * 64, verifier="m", offline=False, verdicts=verdicts)


def test_fc_counts_only_checkers_that_passed_the_gate():
    rejected = Verdict(task_id="r", solvable=True, checker="return true;", model="m",
                       gate=GateResult(accepted=False, reasons=["already true"]))
    verdicts = app("a", "tool", 1, 1)
    verdicts.verdicts.append(rejected)
    assert not rejected.valid
    rate = function_completeness(verdicts)
    assert (rate.numerator, rate.denominator) == (1, 3)
    assert verdicts.function_completeness == round(1 / 3, 6)


def test_fc_is_pooled_over_tasks_per_domain_and_overall():
    summary = completeness_summary([app("a", "tool", 1, 1), app("b", "tool", 6, 0), app("c", "game", 0, 2)])
    assert summary.per_app["a"].value == 0.5 and summary.per_app["b"].value == 1.0
    # Pooled: 7 of 8 tool tasks (an average of app rates would say 75%).
    assert (summary.per_domain["tool"].numerator, summary.per_domain["tool"].denominator) == (7, 8)
    assert summary.per_domain["game"].value == 0.0
    assert (summary.overall.numerator, summary.overall.denominator) == (7, 10)
    assert str(summary.overall) == "70.0% (7/10)"


def test_app_without_tasks_has_zero_fc_rather_than_an_error():
    assert function_completeness(app("empty", "tool", 0, 0)).value == 0.0


def test_task_without_a_valid_checker_is_a_cua_failure_whatever_the_rollout_said():
    verdicts = app("a", "tool", 2, 1)
    outcomes = success_outcomes(verdicts, {"ok-0": True, "no-0": True})
    assert outcomes == {"ok-0": True, "ok-1": False, "no-0": False}
    rate = success_rate(verdicts, {"ok-0": True, "no-0": True})
    assert (rate.numerator, rate.denominator) == (1, 3)


def test_fc_proven_counts_only_proven_checkers_over_all_tasks():
    verdicts = app("a", "tool", valid=3, invalid=1, proven=2)
    assert [v.proof for v in verdicts.verdicts] == ["proven", "proven", "claimed", "unsupported"]
    assert [v.proven for v in verdicts.verdicts] == [True, True, False, False]
    rate = function_completeness_proven(verdicts)
    assert (rate.numerator, rate.denominator) == (2, 4)
    assert verdicts.function_completeness_proven == 0.5 and verdicts.function_completeness == 0.75


def test_sr_over_proven_tasks_leaves_out_claimed_and_unsupported_ones():
    verdicts = app("a", "tool", valid=3, invalid=1, proven=2)
    succeeded = {"ok-0": True, "ok-1": False, "ok-2": True, "no-0": True}
    rate = success_rate_proven(verdicts, succeeded)
    assert (rate.numerator, rate.denominator) == (1, 2)  # ok-2 succeeded but is only claimed
    assert (success_rate(verdicts, succeeded).numerator, success_rate(verdicts, succeeded).denominator) == (2, 4)
    assert success_rate_proven(app("b", "tool", valid=1, invalid=1), {"ok-0": True}).value == 0.0  # nothing proven


def test_fc_proven_is_pooled_beside_fc_per_app_domain_and_overall():
    summary = completeness_summary([app("a", "tool", 2, 2, proven=1), app("b", "tool", 4, 0, proven=4), app("c", "game", 1, 1)])
    assert (summary.per_app_proven["a"].numerator, summary.per_app_proven["a"].denominator) == (1, 4)
    assert (summary.per_domain_proven["tool"].numerator, summary.per_domain_proven["tool"].denominator) == (5, 8)
    assert (summary.per_domain["tool"].numerator, summary.per_domain["tool"].denominator) == (6, 8)
    assert summary.per_domain_proven["game"].value == 0.0 and summary.per_domain["game"].value == 0.5
    assert list(summary.per_domain_proven) == ["game", "tool"]
    assert str(summary.overall_proven) == "50.0% (5/10)" and str(summary.overall) == "70.0% (7/10)"
