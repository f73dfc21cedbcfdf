"""FC proven and SR proven in the tables: counted from each task's proof status, hand-checked figures,
and shown wherever the figures go: results.json, the CLI's table and report.html."""

from __future__ import annotations

import json

from rich.console import Console

from aui._tables import results_table
from results import AppRoundResult, TaskOutcome, csv_table, markdown_table, table_rows, write_report, write_results


def _result(domain: str, tasks: list[TaskOutcome], round_: int = 0) -> AppRoundResult:
    return AppRoundResult(app_id=f"app-{domain}", domain=domain, coder="offline", cua="heuristic", mode="integrated",
                          round=round_, html="x/index.html", html_sha="0" * 64, tasks=tasks)


def _task(task_id: str, proof: str | None, success: bool, reason: str | None = None) -> TaskOutcome:
    valid = proof in ("proven", "claimed")
    return TaskOutcome(task_id=task_id, solvable=valid, checker_valid=valid, proof=proof, proof_reason=reason, success=success)


CLAIMED_WHY = "the checker stayed false after its solution: #total shows '0'"


def _two_rounds() -> list[AppRoundResult]:
    """Two rounds of two apps with one claimed task (tool's c), figures worked out by hand below.

    round 0  tool 75.0 / 50.0 / 50.0 (SR proven 50.0) · interactive 100 / 100 / 50.0 · overall 83.3 / 66.7 / 50.0, SR proven 50.0
    round 1  tool 75.0 / 50.0 / 50.0 (SR proven 100)  · interactive 100 / 100 / 100  · overall 83.3 / 66.7 / 66.7, SR proven 100
    """
    results = []
    for round_, (b, c, f) in enumerate([(False, True, False), (True, False, True)]):
        results.append(_result("tool", [_task("a", "proven", True), _task("b", "proven", b),
                                        _task("c", "claimed", c, CLAIMED_WHY), _task("d", "unsupported", False)], round_))
        results.append(_result("interactive", [_task("e", "proven", True), _task("f", "proven", f)], round_))
    return results


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
    # new columns go last: the proven figures and the weighted score, then the 95 % intervals
    assert "sr_supported,fc_proven,sr_proven,proven_tasks,weighted,fc_ci95_low," in header
    assert header.endswith(",weighted_ci95_low,weighted_ci95_high")
    assert "overall FC/FCp/SR/W" in markdown_table([row]) and "83.3 / 50.0 / 50.0 / 50.0" in markdown_table([row])


def test_a_run_from_before_proofs_shows_unknown_not_zero():
    old = _result("tool", [_task("a", None, True), _task("b", None, False)])
    old.tasks[0].checker_valid = old.tasks[1].checker_valid = True
    (row,) = table_rows([old])
    assert row.fc["overall"] == 1.0
    assert row.fc_proven["overall"] is None and row.sr_proven["overall"] is None
    assert old.fc_proven is None
    assert "100.0 / – / 50.0 / 50.0" in markdown_table([row])


def test_results_json_holds_fc_proven_and_sr_proven_per_domain_and_round(tmp_path):
    write_results(tmp_path, _two_rounds())
    payload = json.loads((tmp_path / "results.json").read_text())
    first, second = sorted(payload["table"], key=lambda row: row["round"])
    assert (first["fc_proven"]["tool"], first["sr_proven"]["tool"]) == (0.5, 0.5)
    assert (second["fc_proven"]["tool"], second["sr_proven"]["tool"]) == (0.5, 1.0)
    assert (first["fc_proven"]["interactive"], second["sr_proven"]["interactive"]) == (1.0, 1.0)
    assert first["fc_proven"]["overall"] == second["fc_proven"]["overall"] == 4 / 6
    assert (first["sr_proven"]["overall"], second["sr_proven"]["overall"]) == (0.5, 1.0)
    assert first["fc_proven"]["game"] is None and first["proven_tasks"]["overall"] == 4  # a domain without tasks: unknown
    claimed = [(app["round"], task["task_id"], task["proof_reason"]) for app in payload["apps"] for task in app["tasks"]
               if task["proof"] == "claimed"]
    assert claimed == [(0, "c", CLAIMED_WHY), (1, "c", CLAIMED_WHY)]


def test_the_cli_table_prints_fc_proven_and_sr_proven():
    console = Console(record=True, width=240)
    console.print(results_table(table_rows(_two_rounds())))
    text = console.export_text()
    assert "FC / FC proven / SR" in text and "SR prov." in text
    lines = [line for line in text.splitlines() if "offline" in line and "heuristic" in line]
    assert len(lines) == 2
    # domains in DOMAINS order (interactive before tool), then overall, SR sup., SR prov., tasks; each cell ends with
    # the weighted score, here SR's equal (no task has a level: every weight is 1)
    assert " ".join(["100.0 / 100.0 / 50.0 / 50.0", "│", "75.0 / 50.0 / 50.0 / 50.0", "│", "83.3 / 66.7 / 50.0 / 50.0", "│",
                     "60.0", "│", "50.0", "│", "6"]) in " ".join(lines[0].split())
    assert " ".join(["100.0 / 100.0 / 100.0 / 100.0", "│", "75.0 / 50.0 / 50.0 / 50.0", "│", "83.3 / 66.7 / 66.7 / 66.7",
                     "│", "80.0", "│", "100.0", "│", "6"]) in " ".join(lines[1].split())


def test_the_report_shows_the_proven_figures_and_each_claimed_task_with_why(tmp_path):
    results = _two_rounds()
    html = write_report(tmp_path, table_rows(results), results, offline_roles=[]).read_text()
    assert "<th>SR (proven)</th>" in html and "FC proven" in html
    # overall cells (FC, FC proven, SR, weighted) of both rounds, then SR (supported) and SR (proven)
    assert "<td>83.3<br><small>66.7</small><br><b>50.0</b><br><i>50.0</i></td><td>60.0</td><td>50.0</td>" in html
    assert "<td>83.3<br><small>66.7</small><br><b>66.7</b><br><i>66.7</i></td><td>80.0</td><td>100.0</td>" in html
    section = html.split("<h4>Checkers claimed, not proven (counted in FC, not in FC proven)</h4>")
    assert len(section) == 2, "one app has a claimed task, so one list"
    assert section[1].startswith("<ul><li>c: the checker stayed false after its solution: #total shows &#x27;0&#x27;</li></ul>")
