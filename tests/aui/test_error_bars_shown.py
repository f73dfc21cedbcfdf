"""The error bars where the flows and the CLI show them: Prefect's round table and `aui report`'s console tables
(the figures themselves are proven in tests/results/test_error_bars.py, on the same example)."""

from rich.console import Console

from aui._tables import interval_table, print_comparisons
from flows import round_table
from results import comparisons, write_results
from tests.results.test_error_bars import _the_issues_example


def test_the_cli_and_prefects_round_table_show_the_intervals_and_the_comparisons(tmp_path):
    results = _the_issues_example()
    rows = write_results(tmp_path, results)

    console = Console(record=True, width=160)
    console.print(interval_table(rows))
    print_comparisons(console, comparisons(results))
    text = console.export_text()
    assert "55.3 [45.7, 64.6]" in text and "[low, high] = 95 % interval" in text
    assert "round 1 vs round 0: +11.7 points [4.1, 19.0], p = 0.004, 14 tasks gained, 2 lost" in text

    (record,) = round_table(rows, 0)
    assert (record["SR overall"], record["SR overall 95% CI"]) == ("55.3", "[45.7, 64.6]")
    assert record["FC tool 95% CI"] == "[92.9, 100.0]"  # 50 of 50: 50 / (50 + z²) = 0.92866
