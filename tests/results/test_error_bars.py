"""Error bars in the results (issue 29): every FC, SR and weighted score carries its 95 % interval, and
rounds and tracks are compared on the same tasks — in results.json, results.md, report.html, the CLI and
the Prefect table. Figures are checked against the statistics' hand-worked values (tests/results/test_intervals.py)."""

from __future__ import annotations

import json

import pytest

from results import AppRoundResult, RepeatOutcomes, TaskOutcome, read_results, table_rows, write_report, write_results
from results._error_bars import comparisons
from results._intervals import bootstrap_paired_difference_interval, bootstrap_ratio_interval, wilson_interval

FIGURES = ("fc", "sr", "sr_supported", "fc_proven", "sr_proven", "weighted", "sr_per_level")


def _outcome(task_id: str, passed: bool, valid: bool = True, level: str | None = None) -> TaskOutcome:
    return TaskOutcome(task_id=task_id, solvable=valid, checker_valid=valid, proof="proven" if valid else "unsupported",
                       success=passed, level=level)


def _result(app_id: str, domain: str, passes: list[bool], round_: int = 0, cua: str = "heuristic",
            mode: str = "integrated", commenter: str | None = "dashboard", html_sha: str = "v0",
            repeats: list[list[bool]] | None = None, levels: list[str | None] | None = None) -> AppRoundResult:
    levels = levels or [None] * len(passes)
    tasks = [_outcome(f"t{i:03d}", passed, level=level) for i, (passed, level) in enumerate(zip(passes, levels))]
    extra = [RepeatOutcomes(repeat=r + 1, tasks=[_outcome(f"t{i:03d}", passed, level=level)
                                                 for i, (passed, level) in enumerate(zip(more, levels))])
             for r, more in enumerate(repeats or [])]
    return AppRoundResult(app_id=app_id, domain=domain, coder="offline", cua=cua, mode=mode, commenter_mode=commenter,
                          round=round_, html=f"{app_id}/{round_}.html", html_sha=html_sha, tasks=tasks, repeats=extra)


def _the_issues_example() -> list[AppRoundResult]:
    """103 tasks over two apps; round 0 passes 57, round 1 gains 14 and loses 2 → 69 (the issue's b = 14, c = 2)."""
    before = [i < 57 for i in range(103)]
    after = [(i < 57 and i not in (0, 1)) or 57 <= i < 71 for i in range(103)]
    assert (sum(before), sum(after)) == (57, 69)
    return [_result("calc", "tool", before[:50]), _result("todo", "app", [*before[50:]]),
            _result("calc", "tool", after[:50], round_=1, html_sha="v1"), _result("todo", "app", after[50:], round_=1,
                                                                                    html_sha="v1")]


def _split(passes: list[bool]) -> tuple[list[bool], list[bool]]:
    return passes[:50], passes[50:]


def test_every_figure_of_results_json_has_its_interval_beside_it(tmp_path):
    results = _the_issues_example()
    write_results(tmp_path, results)
    payload = json.loads((tmp_path / "results.json").read_text())
    for row in payload["table"]:
        for figure in FIGURES:
            intervals = row[f"{figure}_ci95"]
            assert set(intervals) == set(row[figure]), figure  # the same domains (levels)
            for domain, value in row[figure].items():
                if value is None:
                    assert intervals[domain] is None, (figure, domain)
                else:
                    low, high = intervals[domain]
                    assert 0 <= low <= value <= high <= 1, (figure, domain, low, value, high)
    for record in payload["by_cua"]:
        assert record["heuristic SR_ci95"] and record["heuristic FC_ci95"]
    (commented,) = payload["by_commenter_mode"]
    assert commented["SR_ci95"] and commented["FC_ci95"]
    for record in payload["scoring"]:
        assert {key for key in record if key.endswith("_ci95")} == {"SR_ci95", "weighted_ci95", "SR none_ci95"}
    assert payload["error_bars"]["level"] == 0.95 and "Wilson" in payload["error_bars"]["one_run"]


def test_one_run_gets_wilson_over_the_tasks_of_each_figure(tmp_path):
    rows = write_results(tmp_path, _the_issues_example())
    first = rows[0]
    # 57 of 103 overall: [0.45719, 0.64576] by hand (test_intervals.py); 6 digits in results.json
    assert [round(b, 5) for b in first.sr_ci95["overall"]] == [0.45719, 0.64576]
    assert first.fc_ci95["overall"] == [round(103 / (103 + 1.959964 ** 2), 6), 1.0]  # 103 of 103: n / (n + z²)
    # a domain is over its own tasks: tool has the first 50 (all passing in round 0)
    assert first.sr_ci95["tool"] == [round(b, 6) for b in wilson_interval(50, 50)]
    assert first.sr_ci95["game"] is None  # no task there
    # in % with one decimal where the figure is in % with one decimal (the summary tables)
    stored = json.loads((tmp_path / "results.json").read_text())
    assert stored["by_cua"][0]["heuristic SR_ci95"] == [45.7, 64.6]
    assert stored["scoring"][0]["SR_ci95"] == [45.7, 64.6]
    # no level: every weight is 1, so the weighted score's interval is SR's
    assert first.weighted_ci95["overall"] == first.sr_ci95["overall"]


def test_the_weighted_scores_interval_counts_the_heavy_tasks_as_few_tasks():
    # a gold task (weight 8) passed, four wood tasks (weight 1) failed: 8 / 12 = 66.7 %, but over n_eff = 144 / 68 tasks
    (row,) = table_rows([_result("a", "app", [True, False, False, False, False],
                                 levels=["gold", "wood", "wood", "wood", "wood"])])
    assert row.weighted["overall"] == pytest.approx(8 / 12)
    low, high = row.weighted_ci95["overall"]
    sr_low, sr_high = row.sr_ci95["overall"]  # 1 of 5
    assert low < 8 / 12 < high and high - low > sr_high - sr_low


def test_with_repeats_the_interval_is_a_seeded_bootstrap_over_tasks(tmp_path):
    # 20 tasks, 3 repeats: task i passes in repeat r when (i + r) % 4 != 0 → per-task k of 3
    passes = [[(i + r) % 4 != 0 for i in range(20)] for r in range(3)]
    result = _result("a", "app", passes[0], repeats=passes[1:])
    (row,) = write_results(tmp_path, [result])
    k = [sum(passes[r][i] for r in range(3)) for i in range(20)]
    expected = bootstrap_ratio_interval(k, [3] * 20)  # tasks in id order, each with its 3 repeats
    assert row.sr_ci95["overall"] == [round(expected[0], 6), round(expected[1], 6)]
    assert row.sr["overall"] == pytest.approx(sum(k) / 60)
    # not the rollouts as independent trials: three identical repeats of 20 tasks are 20 tasks' worth, not 60
    same = [i % 2 == 0 for i in range(20)]
    (identical,) = table_rows([_result("a", "app", same, repeats=[same, same])])
    naive = wilson_interval(30, 60)
    assert identical.sr_ci95["overall"][1] - identical.sr_ci95["overall"][0] > 1.2 * (naive[1] - naive[0])
    assert row.fc_ci95["overall"] == [round(b, 6) for b in wilson_interval(20, 20)]  # FC counts each task once
    first = (tmp_path / "results.json").read_bytes()
    write_results(tmp_path, [result])
    assert (tmp_path / "results.json").read_bytes() == first  # seeded: byte for byte the same


def test_with_repeats_that_all_agree_at_0_or_100_percent_the_interval_is_wilson_on_the_tasks_not_a_point():
    (never,) = table_rows([_result("a", "app", [False] * 5, repeats=[[False] * 5, [False] * 5])])
    assert never.sr_ci95["overall"] == [0.0, round(1.959964 ** 2 / (5 + 1.959964 ** 2), 6)]  # 0 of 5 tasks, not of 15
    assert never.weighted_ci95["overall"] == never.sr_ci95["overall"]
    (always,) = table_rows([_result("a", "app", [True] * 5, repeats=[[True] * 5])])
    assert always.sr_ci95["overall"] == [round(5 / (5 + 1.959964 ** 2), 6), 1.0]
    # and a comparison in which no task's pass rate moved is not a point at 0 either
    steady = [i < 3 for i in range(10)]
    (compared,) = comparisons([_result("a", "app", steady, repeats=[steady]),
                               _result("a", "app", steady, round_=1, html_sha="v1", repeats=[steady])])
    low, high = compared.difference_ci95
    assert (compared.gained, compared.lost, compared.p_value) == (0, 0, 1.0) and low < 0 < high


def test_round_vs_round_is_a_paired_comparison_with_mcnemar(tmp_path):
    results = _the_issues_example()
    found = comparisons(results)
    (compared,) = found
    assert (compared.kind, compared.compared, compared.baseline, compared.tasks) == ("rounds", "round 1", "round 0", 103)
    assert (compared.gained, compared.lost) == (14, 2)
    assert compared.p_value == 274 / 65536  # exact McNemar on b = 14, c = 2 (test_intervals.py)
    assert compared.difference == pytest.approx(12 / 103)
    # Newcombe's interval of the paired table both 55, round 1 only 14, round 0 only 2, neither 32:
    # Wilson 69/103 = [0.574418, 0.753170], 57/103 = [0.457192, 0.645764]; A = 55·32 − 14·2 = 1732 > n/2:
    # ψ = (1732 − 51.5) / √(69·34·57·46) = 1680.5 / 2480.164 = 0.677576; the difference 12/103 = 0.116505
    # low  = 0.116505 − √(0.095485² + 0.092366² − 2ψ·0.095485·0.092366) = 0.116505 − 0.075479 = 0.041026
    # high = 0.116505 + √(0.096206² + 0.083267² − 2ψ·0.096206·0.083267) = 0.116505 + 0.073028 = 0.189533
    assert [round(b, 5) for b in compared.difference_ci95] == [0.04103, 0.18953]
    assert compared.sentence() == ("round 1 vs round 0: +11.7 points [4.1, 19.0], p = 0.004, 14 tasks gained, 2 lost "
                                   "(103 tasks)")
    write_results(tmp_path, results)
    stored = read_results(tmp_path)
    assert stored.comparisons == found
    markdown = (tmp_path / "results.md").read_text()
    assert "offline · heuristic · integrated · dashboard — round 1 vs round 0: +11.7 points [4.1, 19.0], p = 0.004" in markdown
    assert "| offline | heuristic | integrated | 0 | overall | 103 | 100.0 [96.4, 100.0] | 100.0 [96.4, 100.0] | 55.3 [45.7, 64.6] |" \
        in markdown


def test_round_r_is_compared_with_round_0_and_with_the_round_before():
    results = _the_issues_example()
    results += [r.model_copy(update={"round": 2, "html_sha": "v2"}) for r in results[2:]]
    pairs = [(c.compared, c.baseline) for c in comparisons(results)]
    assert pairs == [("round 1", "round 0"), ("round 2", "round 0"), ("round 2", "round 1")]


def test_tracks_are_compared_where_they_differ_and_not_where_they_share_rollouts():
    base = [True] * 6 + [False] * 4
    results = [
        # two modes of one coder × CUA share round 0 (the same version judged by the same agent)
        _result("a", "app", base, mode="integrated"), _result("a", "app", base, mode="cua"),
        _result("a", "app", [True] * 9 + [False], round_=1, mode="integrated", html_sha="i1"),
        _result("a", "app", [True] * 7 + [False] * 3, round_=1, mode="cua", html_sha="c1"),
        # another CUA on the same round-0 version: compared at round 0 too
        _result("a", "app", [False] * 6 + [True] * 4, cua="uitars", mode="integrated"),
    ]
    tracks = [(c.compared, c.baseline, c.context) for c in comparisons(results) if c.kind == "tracks"]
    assert ("mode integrated", "mode cua", "offline · heuristic · dashboard, round 1") in tracks
    assert not any(context.endswith("round 0") and compared.startswith("mode") for compared, _, context in tracks)
    cua = next(c for c in comparisons(results) if c.compared == "cua uitars")
    assert (cua.baseline, cua.context, cua.gained, cua.lost) == ("cua heuristic", "offline · integrated · dashboard, round 0", 4, 6)
    modes = next(c for c in comparisons(results) if c.compared == "mode integrated")
    assert (modes.gained, modes.lost, modes.difference) == (2, 0, pytest.approx(0.2))


def test_with_repeats_tasks_gained_and_lost_follow_their_pass_rates():
    # 12 tasks, 2 repeats. Round 0: task i passes once (k = 1) for i < 6, never after. Round 1: twice for i < 8.
    zero = _result("a", "app", [i < 6 for i in range(12)], repeats=[[False] * 12])
    one = _result("a", "app", [i < 8 for i in range(12)], round_=1, html_sha="v1", repeats=[[i < 8 for i in range(12)]])
    (compared,) = comparisons([zero, one])
    assert compared.repeats and (compared.gained, compared.lost) == (8, 0)
    assert compared.p_value == 2 / 256  # the sign test: 8 rose, none fell
    assert compared.difference == pytest.approx(16 / 24 - 6 / 24)
    expected = bootstrap_paired_difference_interval([(2 if i < 8 else 0, 2) for i in range(12)],
                                                    [(1 if i < 6 else 0, 2) for i in range(12)])
    assert compared.difference_ci95 == [round(expected[0], 6), round(expected[1], 6)]


def test_the_report_shows_the_intervals_and_the_comparisons(tmp_path):
    results = _the_issues_example()
    rows = write_results(tmp_path, results)
    html = write_report(tmp_path, rows, results, []).read_text()
    assert "<h3>With 95 % intervals</h3>" in html and "<td>55.3 [45.7, 64.6]</td>" in html
    assert "<b>round 1 vs round 0</b>: +11.7 points [4.1, 19.0], p = 0.004, 14 tasks gained, 2 lost (103 tasks)" in html
    assert "<td>55.3 [45.7, 64.6] (100.0 [96.4, 100.0])</td>" in html  # by CUA: SR (FC), each with its interval


def test_a_results_file_from_before_error_bars_still_loads_and_shows_no_interval(tmp_path):
    write_results(tmp_path, _the_issues_example())
    payload = json.loads((tmp_path / "results.json").read_text())
    for row in payload["table"]:
        for figure in FIGURES:
            del row[f"{figure}_ci95"]
    del payload["comparisons"], payload["error_bars"]
    (tmp_path / "results.json").write_text(json.dumps(payload))
    stored = read_results(tmp_path)
    assert stored.table[0].sr_ci95 == {} and stored.comparisons == [] and stored.error_bars == {}
