"""`aui insights`: the principle table of a run, written to insights.json and the report; bad input is one line."""

from __future__ import annotations

import json
import re

import pytest
from typer.testing import CliRunner

from aui import app as cli
from tests.insights.test_attribution import _fixture_run
from tests.insights.test_verdicts import MODEL_CODER, V0, _run


def test_insights_prints_the_principle_table_and_writes_insights_json_and_the_reports_section(tmp_path):
    run = _fixture_run(tmp_path / "run")
    result = CliRunner().invoke(cli, ["insights", str(run)])
    assert result.exit_code == 0, result.output
    assert "interaction robustness" in result.output and "association, not cause" in result.output
    assert "2 of 3 flips" in result.output and "every role offline" in result.output
    written = json.loads((run / "insights.json").read_text())
    assert written["flips_total"] == 3 and {row["principle"] for row in written["principles"]} == {
        "interaction robustness", "state visibility"}
    report = (run / "report.html").read_text()
    assert "<h2>Design insights</h2>" in report and "t5" in report


def test_an_unverifiable_change_has_its_own_column_in_the_printed_table_and_the_report(tmp_path):
    """A model coder was asked to remove every animation (no element named) and no task acted on anything: the claim
    is unverifiable, not applied — 0 applied, 1 unverifiable, 0 revisions."""
    line = "Remove all animations and transitions — predictable behaviour."
    run = _run(tmp_path / "run", V0.replace(">Ready<", ">Set<"), MODEL_CODER, [line], None)
    result = CliRunner().invoke(cli, ["insights", str(run)])
    assert result.exit_code == 0, result.output
    assert "unverifiable" in result.output and "revisions" in result.output
    assert re.search(r"predictable behaviour\s*│\s*0\s*│\s*1\s*│\s*0\s*│", result.output), result.output
    report = (run / "report.html").read_text()
    assert "<th>applied</th><th>unverifiable</th><th>revisions</th>" in report
    assert "<td>predictable behaviour</td><td>0</td><td>1</td><td>0</td>" in report


@pytest.mark.parametrize("argv, message", [
    (["insights", "{missing}"], "not a finished run folder"),
    (["insights", "{run}", "{run}/"], "named twice (each run's task pairs count once)"),
    (["insights", "ablate", "{run}", "--principle", "beauty"], "--principle 'beauty': not a principle; the principles "
                                                              "are state visibility, interaction robustness"),
    (["insights", "ablate", "{run}"], "exactly one of --principle and --change"),
    (["insights", "ablate", "{run}", "{run}", "--principle", "state visibility"], "one run folder"),
    (["insights", "{run}", "--principle", "state visibility"], "belong to `aui insights ablate RUN_DIR`"),
])
def test_bad_input_is_one_error_line_naming_the_value(tmp_path, argv, message):
    run = _fixture_run(tmp_path / "run")
    argv = [part.format(run=run, missing=tmp_path / "missing") for part in argv]
    result = CliRunner().invoke(cli, argv)
    assert result.exit_code == 2
    assert message in " ".join(result.output.split())
    assert not (run / "insights.json").exists()
