"""Function Completeness per app, domain and overall, and the SR rule it shares."""

from __future__ import annotations

from verifier import (
    AppVerdicts,
    GateResult,
    Verdict,
    completeness_summary,
    function_completeness,
    success_outcomes,
    success_rate,
)


def app(app_id: str, domain: str, valid: int, invalid: int) -> AppVerdicts:
    passed = GateResult(accepted=True, kind="js", javascript="return false;")
    verdicts = [
        Verdict(task_id=f"ok-{i}", solvable=True, checker="return false;", gate=passed, model="m") for i in range(valid)
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
