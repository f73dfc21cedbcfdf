"""`aui variations`: the list of variations, and pictures of one bundled app in each; `aui report`'s variation table."""

from __future__ import annotations

from typer.testing import CliRunner

from flows.cli import app as cli
from perturb import VARIATIONS, variation_names

README_APP = "mortgage-calculator"


def _rows(text: str) -> dict[str, list[str]]:
    """The table's rows by their first cell (the variation's name)."""
    rows = {}
    for line in text.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("│").split("│")]
        if len(cells) == 4 and cells[0]:
            rows[cells[0]] = cells[1:]
    return rows


def test_aui_variations_lists_each_variation_with_its_kind_what_it_does_and_what_it_needs():
    result = CliRunner().invoke(cli, ["variations"])
    assert result.exit_code == 0, result.output
    rows = _rows(result.output)
    kinds = {name: VARIATIONS.get(name).kind for name in variation_names()[1:]}
    assert list(rows) == ["default", *[n for n, k in kinds.items() if k == "appearance"],  # appearance, then content
                          *[n for n, k in kinds.items() if k == "content"]]
    for name in variation_names()[1:]:
        variation = VARIATIONS.get(name)
        kind, summary, needs = rows[name]
        assert (kind, summary) == (variation.kind, variation.summary)
        assert ("translator role" in needs) == (name == "german"), (name, needs)


def test_drawing_a_variation_that_needs_a_model_or_does_not_exist_is_one_error_line():
    for wrong, said in (("german", "translator"), ("sepia", "unknown variation 'sepia'")):
        result = CliRunner().invoke(cli, ["variations", "--show", README_APP, "--variation", wrong])
        assert result.exit_code == 2
        lines = [line for line in result.output.splitlines() if line.strip()]
        assert len(lines) == 1 and lines[0].startswith("error:") and said in lines[0], result.output


def test_aui_report_prints_the_variation_table_of_a_run_with_variations(tmp_path):
    from tests.variation_runs import variation_run

    run_dir = variation_run(tmp_path)
    result = CliRunner().invoke(cli, ["report", str(run_dir)])
    assert result.exit_code == 0, result.output
    assert "SR per variation (%) over the common tasks" in result.output
    assert "50.0 ± 30.6" in result.output  # round 0's spread across variations
