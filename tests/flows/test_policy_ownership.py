"""The rollout alone closes the policy: neither the sweep's rollout stage nor `aui rollout` closes
it again (`cua.rollout` closes it once; tests/cua/test_policy_ownership.py counts that)."""

from __future__ import annotations

import json

import pytest
import typer
from typer.testing import CliRunner

import cua.policies
from apps_prompts import BUNDLED_DIR, load_app, reference_html_path
from aui import rollout_command
from flows import PLAIN_STAGES, AgentSettings, RunContext

APP, TASK = "unit-converter", "five-decimals"  # the heuristic agent does it in one step


@pytest.fixture
def closes(monkeypatch) -> list[str]:
    """Every heuristic policy built from here on records its `close` calls (on the class: however a caller imported
    `get_policy`, the policy it builds is one of these)."""
    calls: list[str] = []
    policy_class = cua.policies.POLICIES.get("heuristic")
    real_close = policy_class.close

    async def close(self) -> None:
        calls.append("heuristic")
        await real_close(self)

    monkeypatch.setattr(policy_class, "close", close)
    return calls


async def test_the_rollout_stage_leaves_closing_the_policy_to_the_rollout(tmp_path, closes):
    spec = load_app(APP)
    task = spec.task(TASK)
    run = RunContext(run_key="k", run_dir=str(tmp_path), apps=str(BUNDLED_DIR))
    html = run.write("index.html", reference_html_path(spec).read_text(encoding="utf-8"))
    ref = await PLAIN_STAGES.rollout(run=run, app_id=APP, round=0, task=task, checker=task.checker, html=html,
                                     agent=AgentSettings(policy="heuristic", max_steps=5), out_path="rollout")
    assert ref.success and ref.steps >= 1
    assert closes == ["heuristic"]


def test_aui_rollout_leaves_closing_the_policy_to_the_rollout(tmp_path, closes):
    cli = typer.Typer()
    cli.callback()(lambda: None)  # keep `rollout` a subcommand, as in `aui rollout`
    cli.command("rollout")(rollout_command)
    result = CliRunner().invoke(cli, ["rollout", "--app", APP, "--task", TASK, "--out", str(tmp_path / "out"),
                                      "--max-steps", "5", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output.strip().splitlines()[-1])["success"] is True
    assert closes == ["heuristic"]
