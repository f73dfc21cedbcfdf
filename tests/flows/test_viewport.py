"""The experiment's viewport reaches the browser, the trajectory, the coordinate spaces, the dashboard and the commenter."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
import typer
from PIL import Image
from typer.testing import CliRunner

from apps_prompts import load_app
from aui import rollout_command
from commenter import collect_facts
from cua import Trajectory, Viewport, smart_resize
from experiment import ConfigError, make_config
from flows import AgentSettings, FileRef, RunContext, sweep
from flows._refs import sha256_bytes
from flows._rollouts import rollout_task
from llm.testing import ScriptedOpenAIServer, reply_text

# A 12×12 button centred at (980, 740): below the fold of the default 1280×720, inside 1024×768.
APP = """<!doctype html><html><body style="margin:0">
<button id="go" style="position:absolute;left:974px;top:734px;width:12px;height:12px;padding:0"></button>
<p id="done" hidden>done</p>
<script>document.getElementById('go').onclick = () => { document.getElementById('done').hidden = false; };</script>
</body></html>"""
CHECKER = "return !document.getElementById('done').hidden;"
TARGET = (980, 740)


def _models_yaml(server: ScriptedOpenAIServer, path: Path) -> Path:
    path.write_text(textwrap.dedent(f"""\
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
    return path


async def test_a_1024x768_rollout_records_1024x768_and_maps_uitars_points_from_that_size(tmp_path, monkeypatch):
    monkeypatch.setenv("AUI_LLM_CACHE", "off")
    viewport = Viewport.model_validate(make_config({"viewport": "1024x768"}).viewport)
    width, height = smart_resize(viewport.width, viewport.height)  # what UI-TARS-1.5 sees: 1036×756
    assert (width, height) != smart_resize(1280, 720)
    point = (TARGET[0] * width / viewport.width, TARGET[1] * height / viewport.height)
    (tmp_path / "v0").mkdir()
    (tmp_path / "v0" / "index.html").write_text(APP, encoding="utf-8")
    task = load_app("unit-converter").tasks[0].model_copy(update={"id": "press-go", "description": "Press the button."})
    with ScriptedOpenAIServer([reply_text(f"Thought: there.\nAction: click(point='<point>{point[0]:.1f} {point[1]:.1f}</point>')")]) as server:
        run = RunContext(run_key="k", run_dir=str(tmp_path), apps="apps_prompts/bundled",
                         models=str(_models_yaml(server, tmp_path / "models.yaml")))
        ref = await rollout_task.fn(run=run, app_id="lab", round=0, task=task, checker=CHECKER,
                                    html=FileRef(path="v0/index.html", sha=sha256_bytes(APP)),
                                    agent=AgentSettings(policy="uitars", max_steps=2, viewport=viewport),
                                    out_path="v0/rollouts/uitars/press-go")
    assert ref.success, ref
    folder = tmp_path / ref.trajectory
    trajectory = Trajectory.load(folder)
    assert (trajectory.viewport_width, trajectory.viewport_height) == (1024, 768)
    assert trajectory.policy_settings["prompt"] == "official", "the published UI-TARS template by default"
    for name in ("step_000.png", "step_001.png"):
        assert Image.open(folder / name).size == (1024, 768)
    executed = trajectory.steps[0].screen_action.point
    assert abs(executed.x - TARGET[0]) <= 1 and abs(executed.y - TARGET[1]) <= 1
    assert Image.open(folder / "dashboard.png").size == (1920, 1080)
    facts = await collect_facts(APP, trajectory, use_axe=False, replay=False)
    assert (facts.viewport_width, facts.viewport_height) == (1024, 768)
    assert not facts.off_viewport_controls, "at 1024×768 the button is on screen"


@pytest.mark.timeout(600)
async def test_an_offline_sweep_at_1024x768_records_1024x768_screenshots(tmp_path, prefect_server):
    """config.viewport → the track's AgentSettings → every rollout of a real (offline, Prefect) sweep."""
    tasks = [task.model_dump(mode="json", exclude_none=True) for task in load_app("unit-converter").tasks[:2]]
    (tmp_path / "tasks.json").write_text(json.dumps({"unit-converter": tasks}), encoding="utf-8")
    config = make_config({"name": "viewport-1024", "app_ids": ["unit-converter"], "rounds": 0, "max_steps": 2,
                          "tasks_file": str(tmp_path / "tasks.json"), "viewport": "1024x768", "out_dir": str(tmp_path)})
    results = await sweep(config)
    folders = [config.run_dir / task.trajectory for result in results for task in result.tasks if task.trajectory]
    assert len(folders) == 2
    for folder in folders:
        trajectory = Trajectory.load(folder)
        assert (trajectory.viewport_width, trajectory.viewport_height) == (1024, 768)
        for name in [trajectory.initial_screenshot, *(step.screenshot for step in trajectory.steps)]:
            assert Image.open(folder / name).size == (1024, 768), f"{folder.name}/{name}"


def test_the_viewport_is_one_config_field_and_one_cli_flag(tmp_path):
    assert str(make_config({}).viewport) == "1280x720"
    assert make_config({"viewport": {"width": 800, "height": 600}}).viewport == Viewport(width=800, height=600)
    with pytest.raises(ConfigError, match="viewport"):
        make_config({"viewport": "big"})
    cli = typer.Typer()
    cli.callback()(lambda: None)
    cli.command("rollout")(rollout_command)
    result = CliRunner().invoke(cli, ["rollout", "--app", "unit-converter", "--task", "x", "--out", str(tmp_path),
                                      "--viewport", "1024by768"])
    assert result.exit_code == 2 and "1280x720" in result.output
    assert json.loads(make_config({"viewport": "1024x768"}).model_dump_json())["viewport"] == {"width": 1024, "height": 768}


async def test_cua_options_reach_the_policy_and_the_trajectory_records_them(tmp_path, monkeypatch):
    monkeypatch.setenv("AUI_LLM_CACHE", "off")
    config = make_config({"cua_policies": ["uitars", "heuristic"], "cua_options": {"uitars": {"prompt": "compact", "history_images": 2}}})
    options = config.cua_options.get("uitars", {})
    (tmp_path / "v0").mkdir()
    (tmp_path / "v0" / "index.html").write_text(APP, encoding="utf-8")
    task = load_app("unit-converter").tasks[0].model_copy(update={"id": "press-go", "description": "Press the button."})
    with ScriptedOpenAIServer([reply_text("Thought: done.\nAction: finished(content='ok')")]) as server:
        run = RunContext(run_key="k", run_dir=str(tmp_path), apps="apps_prompts/bundled",
                         models=str(_models_yaml(server, tmp_path / "models.yaml")))
        ref = await rollout_task.fn(run=run, app_id="lab", round=0, task=task, checker=CHECKER,
                                    html=FileRef(path="v0/index.html", sha=sha256_bytes(APP)),
                                    agent=AgentSettings(policy="uitars", max_steps=2, options=options),
                                    out_path="v0/rollouts/uitars/press-go")
        system = server.requests[0].json["messages"][0]["content"]
    trajectory = Trajectory.load(tmp_path / ref.trajectory)
    assert trajectory.policy_settings == {"prompt": "compact", "history_images": 2, "language": "English"}
    assert "You operate a web app" in str(system), "the compact wording was sent"
    assert config.cua_options.get("heuristic") is None, "options are per policy: the heuristic agent gets none"
