"""The weighted score where every surface shows it: results.md, `aui report`'s tables, report.html and Prefect's
round table (the figures are worked out by hand in tests/flows/test_scoring.py, on the same fixture)."""

from rich.console import Console

from aui._tables import levels_table, results_table
from flows import round_table
from results import write_report, write_results
from tests.flows.test_scoring import _hand_computed

# The hand-computed fixture's cells, FC / FC proven / SR / weighted in %: app, tool, overall (every task is proven,
# the tool app's task without a valid checker too, so FC proven is 100 where FC is not).
CELLS = {"app": ("100.0", "100.0", "66.7", "89.5"), "tool": ("75.0", "100.0", "50.0", "23.1"),
         "overall": ("85.7", "100.0", "57.1", "51.1")}


def test_the_weighted_score_per_domain_is_beside_fc_and_sr_in_results_md_the_cli_the_report_and_prefect(tmp_path):
    results = list(_hand_computed())
    rows = write_results(tmp_path, results)
    markdown = (tmp_path / "results.md").read_text()
    assert "| app FC/FCp/SR/W | landing FC/FCp/SR/W |" in markdown and "| overall FC/FCp/SR/W |" in markdown
    assert "| " + " | ".join(" / ".join(CELLS[d]) for d in ("app",)) + " | – / – / – / – |" in markdown
    assert " | ".join([" / ".join(CELLS["tool"]), "– / – / – / –", " / ".join(CELLS["overall"])]) in markdown

    console = Console(record=True, width=240)
    console.print(results_table(rows, width=240))
    line = " ".join(next(line for line in console.export_text().splitlines() if " c " in line and " u " in line).split())
    assert " │ ".join(" / ".join(CELLS[d]) for d in ("app", "tool", "overall")) in line  # the domains with tasks

    html = write_report(tmp_path, rows, results, []).read_text()
    for domain in ("app", "tool", "overall"):
        assert "<td>{}<br><small>{}</small><br><b>{}</b><br><i>{}</i></td>".format(*CELLS[domain]) in html

    (record,) = round_table(rows, 0)
    assert {key: value for key, value in record.items() if key.startswith("weighted ") and "CI" not in key} == {
        "weighted app": "89.5", "weighted tool": "23.1", "weighted overall": "51.1"}
    assert (record["FC tool"], record["FC proven tool"], record["SR tool"]) == CELLS["tool"][:3]

    levels = Console(record=True, width=120)
    levels.print(levels_table(rows))
    text = levels.export_text()
    header = next(line for line in text.splitlines() if "paper" in line)
    assert [cell.strip() for cell in header.strip("┃ ").split("┃")] == [
        "coder", "CUA", "mode", "round", "paper", "wood", "bronze", "gold", "none"]  # no silver task: no silver column
    figures = next(line for line in text.splitlines() if " c " in line)
    assert [cell.strip() for cell in figures.strip("│ ").split("│")][4:] == ["100.0", "0.0", "50.0", "50.0", "100.0"]
