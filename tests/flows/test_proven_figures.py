"""FC proven and SR proven in the tables: counted from each task's proof status, hand-checked figures."""

from __future__ import annotations

from flows import AppRoundResult, TaskOutcome, table_rows
from flows._results import csv_table, markdown_table


def _result(domain: str, tasks: list[TaskOutcome], round_: int = 0) -> AppRoundResult:
    return AppRoundResult(app_id=f"app-{domain}", domain=domain, coder="offline", cua="heuristic", mode="integrated",
                          round=round_, html="x/index.html", html_sha="0" * 64, tasks=tasks)


def _task(task_id: str, proof: str | None, success: bool) -> TaskOutcome:
    valid = proof in ("proven", "claimed")
    return TaskOutcome(task_id=task_id, solvable=valid, checker_valid=valid, proof=proof, success=success)


def test_fc_proven_and_sr_proven_are_pooled_over_tasks():
    tool = _result("tool", [_task("a", "proven", True), _task("b", "proven", False),
                            _task("c", "claimed", True), _task("d", "unsupported", False)])
    game = _result("interactive", [_task("e", "proven", True), _task("f", "claimed", False)])
    (row,) = table_rows([tool, game])
    # tool: 3 valid, 2 proven of 4; successes 2 (a, c), on proven 1 (a)
    assert row.fc["tool"] == 3 / 4 and row.fc_proven["tool"] == 2 / 4
    assert row.sr["tool"] == 2 / 4 and row.sr_proven["tool"] == 1 / 2
    # overall: 6 tasks, 5 valid, 3 proven; successes 3 (a, c, e), on proven 2 (a, e)
    assert row.fc["overall"] == 5 / 6 and row.fc_proven["overall"] == 3 / 6
    assert row.sr["overall"] == 3 / 6 and row.sr_proven["overall"] == 2 / 3
    assert row.proven_tasks["overall"] == 3
    assert tool.fc_proven == 0.5
    header, first = csv_table([row]).splitlines()[:2]
    assert header.endswith("sr_supported,fc_proven,sr_proven,proven_tasks")
    assert "overall FC/FCp/SR" in markdown_table([row]) and "83.3 / 50.0 / 50.0" in markdown_table([row])


def test_a_run_from_before_proofs_shows_unknown_not_zero():
    old = _result("tool", [_task("a", None, True), _task("b", None, False)])
    old.tasks[0].checker_valid = old.tasks[1].checker_valid = True
    (row,) = table_rows([old])
    assert row.fc["overall"] == 1.0
    assert row.fc_proven["overall"] is None and row.sr_proven["overall"] is None
    assert old.fc_proven is None
    assert "100.0 / – / 50.0" in markdown_table([row])
