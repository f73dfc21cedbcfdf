"""`aui verify` as a function wired into a Typer app, the way `aui` wires it."""

from __future__ import annotations

import json

import typer
from typer.testing import CliRunner

from aui import verify_command

from .conftest import COUNTER_HTML


def cli() -> typer.Typer:
    app = typer.Typer()
    app.command("verify")(verify_command)
    app.command("other")(lambda: None)  # keeps `verify` a subcommand, as in the real CLI
    return app


SPEC = """\
id: counter
title: Counter
domain: utility
prompt: A counter.
reference_html: index.html
tasks:
  - id: add-three
    description: Add one three times.
    expected_outcome: The count reads 3.
    checker: "#count == 3"
  - id: reset
    description: Reset the counter.
    expected_outcome: The count reads 0 after a reset.
"""


def test_verify_offline_prints_fc_and_verdicts_and_writes_the_file(tmp_path):
    apps = tmp_path / "apps" / "counter"
    apps.mkdir(parents=True)
    (apps / "app.yaml").write_text(SPEC)
    (apps / "index.html").write_text(COUNTER_HTML)
    result = CliRunner().invoke(
        cli(), ["verify", "--app", "counter", "--apps", str(tmp_path / "apps"), "--out", str(tmp_path / "out")],
        env={"COLUMNS": "200"},
    )
    assert result.exit_code == 0, result.output
    assert "Function Completeness: 50.0% (1/2)" in result.output
    assert "add-three" in result.output and "no reference checker" in result.output
    written = json.loads((tmp_path / "out" / "verdicts.json").read_text())
    assert written["verifier"] == "offline" and written["function_completeness"] == 0.5


def test_verify_of_an_unknown_app_exits_2_naming_it(tmp_path):
    result = CliRunner().invoke(cli(), ["verify", "--app", "no-such-app", "--out", str(tmp_path)])
    assert result.exit_code == 2
    assert "no-such-app" in result.output
