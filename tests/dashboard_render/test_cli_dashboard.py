"""`aui dashboard` and `aui comment`, wired into a local Typer app the way `aui` wires them."""

from __future__ import annotations

import json

import pytest
import typer
from PIL import Image
from typer.testing import CliRunner

from aui import comment_command, dashboard_command
from llm.testing import ScriptedOpenAIServer, reply_text
from tests.commenter.test_model_commenter import VALID
from tests.commenter.test_offline_commenter import PLANTED
from tests.trajectories import synthetic_trajectory

app = typer.Typer()
app.command("dashboard")(dashboard_command)
app.command("comment")(comment_command)
runner = CliRunner()


def test_aui_dashboard_writes_the_png_and_reports_tokens(tmp_path, synthetic):
    out = tmp_path / "d.png"
    result = runner.invoke(app, ["dashboard", str(synthetic(7)), "--out", str(out), "--json"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout.strip().splitlines()[-1])
    assert summary["path"] == str(out) and summary["steps"] == 7
    assert summary["tokens"]["raw_qwen"] == 8 * 1196 and summary["tokens"]["dashboard_openai"] == 1105
    assert Image.open(out).size == (1920, 1080)


def test_aui_dashboard_says_more_tokens_where_the_dashboard_costs_more(tmp_path, synthetic):
    """Two screenshots cost Qwen fewer tokens than one 1920×1080 dashboard: "12.5% more", not "-12.5% fewer"."""
    short = runner.invoke(app, ["dashboard", str(synthetic(1)), "--out", str(tmp_path / "1.png")], env={"COLUMNS": "200"})
    long = runner.invoke(app, ["dashboard", str(synthetic(7)), "--out", str(tmp_path / "7.png")], env={"COLUMNS": "200"})
    assert short.exit_code == long.exit_code == 0, short.output + long.output
    assert "Qwen2.5-VL 2392 → 2691 (12.5% more)" in short.output and "(-" not in short.output
    assert "Qwen2.5-VL 9568 → 2691 (71.9% fewer)" in long.output


def test_aui_dashboard_names_a_folder_without_a_trajectory(tmp_path):
    result = runner.invoke(app, ["dashboard", str(tmp_path)])
    assert result.exit_code == 2 and "trajectory.json" in result.output


@pytest.mark.parametrize("command", [["dashboard"], ["comment", "--commenter", "offline"]])
def test_a_screenshot_missing_from_the_folder_is_named(tmp_path, command):
    """`dashboard` drew a "no screenshot" tile in its place, left it out of the token count, and exited 0; `comment`
    commented without it and exited 0."""
    synthetic_trajectory(tmp_path, 4)
    missing = tmp_path / "step_002.png"
    missing.unlink()
    result = runner.invoke(app, [command[0], str(tmp_path), *command[1:]])
    assert result.exit_code == 2, result.output
    assert " ".join(result.output.split()) == f"error: {missing}: no such screenshot (trajectory.json names it)"
    assert not (tmp_path / "dashboard.png").exists()


def test_aui_comment_offline_prints_validated_json(tmp_path, synthetic):
    html = tmp_path / "app.html"
    html.write_text(PLANTED)
    result = runner.invoke(app, ["comment", str(synthetic(4)), "--model", "offline", "--html", str(html)])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["offline"] is True and data["commenter"] == "offline"
    assert 3 <= len(data["comment"]["actionable_changes"]) <= 6


def test_aui_comment_with_a_model_from_a_registry_file(tmp_path, synthetic):
    with ScriptedOpenAIServer([reply_text(json.dumps(VALID))]) as server:
        config = tmp_path / "models.yaml"
        config.write_text(
            "roles: {commenter: scripted}\n"
            "models:\n"
            f"  - {{name: scripted, provider: openai-compatible, model: m, base_url: '{server.base_url}', api_key: sk-x}}\n"
        )
        out = tmp_path / "comment.json"
        result = runner.invoke(
            app, ["comment", str(synthetic(4)), "--models-config", str(config), "--mode", "text-only", "--out", str(out)]
        )
    assert result.exit_code == 0, result.output
    data = json.loads(out.read_text())
    assert data["mode"] == "text-only" and data["comment"]["issues"] == VALID["issues"]
    assert server.requests[0].count_images() == 1


def test_aui_comment_refuses_an_unknown_model(tmp_path, synthetic):
    config = tmp_path / "models.yaml"
    config.write_text("roles: {}\nmodels:\n  - {name: only, provider: offline}\n")
    result = runner.invoke(app, ["comment", str(synthetic(4)), "--models-config", str(config), "--model", "nope"])
    assert result.exit_code == 2 and "nope" in result.output
    assert "--commenter offline needs no model" in " ".join(result.output.split())


def test_aui_comment_with_a_model_whose_key_variable_is_unset_says_so_in_one_line(tmp_path, synthetic, monkeypatch):
    """The key is read at the first call, inside the comment: that once ended in a traceback."""
    monkeypatch.delenv("AUI_TEST_UNSET_KEY", raising=False)
    config = tmp_path / "models.yaml"
    config.write_text("roles: {}\nmodels:\n  - {name: keyed, provider: openai-compatible, model: m, "
                      "base_url: 'http://127.0.0.1:9/v1', api_key: '${AUI_TEST_UNSET_KEY}'}\n")
    result = runner.invoke(app, ["comment", str(synthetic(4)), "--models-config", str(config), "--commenter", "keyed"])
    output = " ".join(result.output.split())
    assert result.exit_code == 2, (output, result.exception)  # an exception that escaped would be exit 1
    assert "error: model 'keyed' field 'api_key' needs environment variable AUI_TEST_UNSET_KEY" in output, output
    assert "export AUI_TEST_UNSET_KEY=" in output and "--commenter offline needs no model" in output, output
