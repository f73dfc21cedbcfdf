"""`aui judge RUN_DIR` end to end on a small real run folder."""

from __future__ import annotations

import json
import textwrap

import typer
from typer.testing import CliRunner

from aui import judge_command
from cua import Trajectory
from llm.testing import ScriptedOpenAIServer, reply_text
from verifier.judge import read_judgements, run_trajectories

cli = typer.Typer()
cli.callback()(lambda: None)  # keep `judge` a subcommand, as in `aui judge`
cli.command("judge")(judge_command)


def _invoke(*args: str):
    return CliRunner().invoke(cli, ["judge", *args])


def test_offline_judge_over_a_real_run_prints_a_summary_and_writes_judgements(real_run):
    result = _invoke(str(real_run), "--judge", "offline")
    assert result.exit_code == 0, result.output
    judgements = read_judgements(real_run)
    answered = [j for j in judgements if j.success is not None]
    share = sum(j.success for j in answered) / len(answered)
    assert len(judgements) == len(run_trajectories(real_run)) == 3
    assert f"judged 3 trajectories with offline (offline baseline), mode screenshot: 0 errors, success share {share:.2f}" \
        in result.output
    assert str(real_run / "judgements.jsonl") in result.output.replace("\n", "")


def test_a_model_judge_through_the_models_config(real_run, tmp_path, monkeypatch):
    monkeypatch.setenv("AUI_LLM_CACHE", "off")
    verdict = json.dumps({"success": False, "reason": "The result field is empty.", "confidence": 0.7})
    # The same answer to every request: a retry of an attempt that hit the 10 s limit on a loaded machine is
    # answered too, and counted once (distinct_requests) — one call per trajectory is what is asserted.
    with ScriptedOpenAIServer(default=reply_text(verdict)) as server:
        models = tmp_path / "models.yaml"
        models.write_text(textwrap.dedent(f"""\
            roles: {{judge: local-vlm}}
            models:
              - {{name: local-vlm, provider: openai-compatible, model: vlm, base_url: "{server.base_url}", timeout_s: 10}}
            """), encoding="utf-8")
        result = _invoke(str(real_run), "--models-config", str(models), "--mode", "flow")
    assert result.exit_code == 0, result.output
    assert len(server.distinct_requests()) == 3
    assert "judged 3 trajectories with local-vlm, mode flow: 0 errors, success share 0.00 of 3 answered" in result.output
    assert {(j.judge, j.mode, j.success) for j in read_judgements(real_run)} == {("local-vlm", "flow", False)}


def test_bad_run_folders_and_options_are_one_error_line_exit_2(real_run, tmp_path):
    missing = _invoke(str(tmp_path / "nowhere"), "--model", "offline")
    assert missing.exit_code == 2
    assert missing.output.strip().splitlines() == [f"error: {tmp_path / 'nowhere'}: not a finished run folder (no results.json)"]
    unknown = _invoke(str(real_run), "--model", "no-such-model")
    assert unknown.exit_code == 2 and "no-such-model" in unknown.output
    offline_flow = _invoke(str(real_run), "--model", "offline", "--mode", "flow")
    assert offline_flow.exit_code == 2 and "reads the final page's text only" in offline_flow.output
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "results.json").write_text("{not json", encoding="utf-8")
    broken = _invoke(str(tmp_path / "broken"), "--model", "offline")
    assert broken.exit_code == 2 and "results.json: not valid JSON" in broken.output


def test_an_old_run_without_final_text_says_to_rerun_and_exits_1(real_run):
    for ref in run_trajectories(real_run):
        folder = real_run / ref.trajectory_id
        Trajectory.load(folder).model_copy(update={"final_text": None}).save(folder)
    result = _invoke(str(real_run), "--model", "offline")
    assert result.exit_code == 1
    assert "judged 3 trajectories with offline (offline baseline), mode screenshot: 3 errors" in result.output
    assert "re-run the rollout" in result.output
