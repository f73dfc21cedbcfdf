"""The report's one-line account of a revision's non-regression contract."""

from results._report import _contract_note, _stage_errors
from results import AppRoundResult


def test_a_violated_contract_says_what_was_retried_and_what_is_still_missing():
    note = _contract_note({"status": "violated", "protected_ids": ["a", "b", "c"], "protected_functions": ["add"],
                           "retried": True, "first_missing_ids": ["b", "c"], "first_missing_functions": [],
                           "missing_ids": ["c"], "missing_functions": ["add"], "unchecked_ids": []})
    assert "<b>violated</b>" in note and "3 checker id(s) and 1 function(s)" in note
    assert "retried once after the first reply dropped b, c" in note
    assert "still missing: c, add()" in note


def test_a_kept_contract_is_short_and_no_contract_is_nothing():
    note = _contract_note({"status": "kept", "protected_ids": ["a"], "protected_functions": []})
    assert "<b>kept</b>" in note and "missing" not in note and "retried" not in note
    assert _contract_note(None) == ""


def test_failed_stages_are_listed_per_round_and_absent_when_none_failed():
    ok = AppRoundResult(app_id="a", domain="app", coder="c", cua="h", mode="integrated", round=0, html="", html_sha="")
    bad = ok.model_copy(update={"round": 1, "errors": ["verifying round 1 failed: ModelCallError: 503 <retries out>"]})
    listed = _stage_errors([ok, bad])
    assert "round 1: verifying round 1 failed" in listed and "&lt;retries out&gt;" in listed
    assert _stage_errors([ok]) == ""


def test_the_report_lists_regressions_and_gaming_suspects_with_their_task_ids_and_reasons(tmp_path):
    from results import GamingSuspect
    from results import TaskOutcome, write_report, write_results

    def outcome(task_id: str, success: bool) -> TaskOutcome:
        return TaskOutcome(task_id=task_id, solvable=True, checker_valid=True, proof="proven", success=success,
                           termination="success" if success else "max_steps", steps=3)

    base = dict(app_id="todo-app", domain="app", coder="offline", cua="heuristic", mode="integrated",
                commenter_mode="dashboard", html="", html_sha="")
    round_0 = AppRoundResult(**base, round=0, tasks=[outcome("add-item", True), outcome("mark-done", True),
                                                    outcome("clear-done", False)])
    reason = "the revision changed #status (read by the checker) but no script that writes it <planted>"
    round_1 = AppRoundResult(**base, round=1, revised_from=0,
                             tasks=[outcome("add-item", True), outcome("mark-done", False), outcome("clear-done", True)],
                             regressions=["mark-done"],
                             gaming_suspects=[GamingSuspect(task_id="clear-done", reason=reason, planted_text=["Cleared"])])
    results = [round_0, round_1]
    rows = write_results(tmp_path, results)
    report = write_report(tmp_path, rows, results, []).read_text()
    assert "Regressions (succeeded the round before, failed in this one)" in report
    assert "<li>round 1: mark-done</li>" in report
    assert "Successes to check by hand" in report
    assert ("<li>round 1: <b>clear-done</b> — the revision changed #status (read by the checker) but no script that "
            "writes it &lt;planted&gt;</li>") in report

    clean = [round_0, round_1.model_copy(update={"regressions": [], "gaming_suspects": []})]
    report = write_report(tmp_path, write_results(tmp_path, clean), clean, []).read_text()
    assert "Regressions (" not in report and "Successes to check by hand" not in report
