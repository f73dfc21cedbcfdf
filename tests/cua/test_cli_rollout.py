"""`aui rollout` end to end: spec → reference HTML → policy through the model registry → checker."""

import json
import textwrap

import pytest
import typer
from typer.testing import CliRunner

from aui import rollout_command
from cua import Trajectory
from llm.testing import ScriptedOpenAIServer, reply_text
from tests.cua.cua_lab import INC_BUTTON, LAB

cli = typer.Typer()
cli.callback()(lambda: None)  # keep `rollout` a subcommand, as in `aui rollout`
cli.command("rollout")(rollout_command)


@pytest.fixture
def apps_dir(tmp_path):
    folder = tmp_path / "apps" / "lab"
    folder.mkdir(parents=True)
    (folder / "index.html").write_text(LAB, encoding="utf-8")
    (folder / "app.yaml").write_text(textwrap.dedent("""\
        id: lab
        title: Lab
        domain: tool
        prompt: A counter and a form.
        reference_html: index.html
        tasks:
          - id: add-one
            description: Add one to the counter.
            expected_outcome: The counter reads 1.
            checker: "return Number(document.querySelector('#count').textContent) >= 1;"
        """), encoding="utf-8")
    return tmp_path / "apps"


def test_cli_runs_a_uitars_rollout_and_prints_reason_and_steps(apps_dir, tmp_path, monkeypatch):
    monkeypatch.setenv("AUI_LLM_CACHE", "off")
    x, y = INC_BUTTON[0] * 1288 / 1280, INC_BUTTON[1] * 728 / 720
    with ScriptedOpenAIServer([reply_text(f"Thought: add\nAction: click(point='<point>{x:.0f} {y:.0f}</point>')")]) as server:
        models = tmp_path / "models.yaml"
        models.write_text(textwrap.dedent(f"""\
            models:
              - name: local-uitars
                provider: openai-compatible
                model: ui-tars-1.5-7b
                base_url: {server.base_url}
                timeout_s: 10
                max_retries: 0
            roles:
              cua: local-uitars
            """), encoding="utf-8")
        out = tmp_path / "run"
        result = CliRunner().invoke(cli, ["rollout", "--app", "lab", "--task", "add-one", "--cua", "uitars",
                                          "--models", str(models), "--apps", str(apps_dir), "--out", str(out), "--json"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output.strip().splitlines()[-1])
    assert summary["termination"] == "success" and summary["steps"] == 1 and summary["offline"] is False
    saved = json.loads((out / "trajectory.json").read_text())
    assert saved["app_id"] == "lab" and saved["task_id"] == "add-one" and saved["model"] == "local-uitars"
    assert saved["expected_outcome"] == "The counter reads 1."


def test_cli_names_the_known_tasks_when_the_task_is_unknown(apps_dir, tmp_path):
    result = CliRunner().invoke(cli, ["rollout", "--app", "lab", "--task", "nope", "--apps", str(apps_dir),
                                      "--out", str(tmp_path / "x")], env={"COLUMNS": "200"})
    assert result.exit_code == 2
    # the KeyError's text as it is: not in the quotes `str(KeyError)` puts round it
    assert "error: app 'lab' has no task 'nope' (known: add-one" in result.output, result.output


def test_the_offline_agent_is_labelled_offline(apps_dir, tmp_path):
    result = CliRunner().invoke(cli, ["rollout", "--app", "lab", "--task", "add-one", "--apps", str(apps_dir),
                                      "--out", str(tmp_path / "run")], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "with heuristic (offline);" in result.output


def test_a_rollout_into_an_earlier_ones_folder_leaves_no_file_the_new_one_does_not_name(tmp_path):
    """The earlier rollout had more steps and a trace: its extra screenshots, trace.zip and dashboard go with it; a
    file of the user's in the folder (the app HTML `aui comment` reads from there) stays."""
    out = tmp_path / "run"

    def roll_out(*flags):
        result = CliRunner().invoke(cli, ["rollout", "--app", "unit-converter", "--task", "save-kg-to-lb",
                                          "--out", str(out), *flags])
        assert result.exit_code == 0, result.output
        return Trajectory.load(out)

    roll_out("--max-steps", "3", "--trace")
    (out / "index.html").write_text("<p>the user's</p>", encoding="utf-8")
    (out / "dashboard.png").write_bytes(b"drawn of the earlier trajectory")  # as `aui dashboard` leaves it
    assert {"step_003.png", "trace.zip"} <= {path.name for path in out.iterdir()}
    trajectory = roll_out("--max-steps", "1")
    named = {trajectory.initial_screenshot, *(step.screenshot for step in trajectory.steps)}
    assert sorted(path.name for path in out.iterdir()) == sorted(named | {"trajectory.json", "tuples.jsonl",
                                                                          "index.html"})
