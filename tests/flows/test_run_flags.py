"""`aui run`'s flags reach the run: `--viewport` and `--repeats` through the real command (a tiny offline run:
one app, one task, round 0), a bad value is one `error:` line naming the flag, and running the same
command again rolls nothing out (every repeat comes from its own cache)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from PIL import Image

from apps_prompts import load_app
from cua import Trajectory
from results import read_results

ROOT = Path(__file__).resolve().parents[2]
AUI = Path(sys.executable).parent / "aui"
APP = "unit-converter"


def _env(folder: Path) -> dict[str, str]:
    from prefect.settings import PREFECT_API_URL

    env = {k: v for k, v in os.environ.items() if not k.startswith(("PREFECT_", "PYTEST_", "AUI_"))}
    env.update({"PREFECT_HOME": str(folder / "prefect-home"), "PREFECT_API_URL": PREFECT_API_URL.value(),
                "PREFECT_SERVER_ANALYTICS_ENABLED": "false", "DO_NOT_TRACK": "1", "AUI_CACHE_DIR": str(folder / "cache")})
    return env


def _one_task(folder: Path) -> Path:
    path = folder / "tasks.yaml"
    path.write_text(yaml.safe_dump({APP: [load_app(APP).tasks[0].model_dump(mode="json", exclude_none=True)]}, sort_keys=False))
    return path


@pytest.mark.parametrize(("flag", "value"), [("--viewport", "1024by768"), ("--repeats", "0")])
def test_a_bad_flag_value_is_one_error_line_naming_the_flag(tmp_path, flag, value):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PREFECT_", "PYTEST_", "AUI_"))}
    done = subprocess.run([str(AUI), "run", "--offline", flag, value, "--out", str(tmp_path / "runs")], cwd=ROOT,
                          env={**env, "PREFECT_HOME": str(tmp_path / "prefect-home")}, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.splitlines() == [done.stderr.strip()] and done.stderr.startswith(f"error: {flag}: "), done.stderr
    assert value in done.stderr and done.stdout == ""
    assert not (tmp_path / "runs").exists()  # refused before anything started


@pytest.mark.timeout(600)
def test_viewport_and_repeats_flags_reach_the_run_and_running_it_again_rolls_nothing_out(prefect_server, tmp_path):
    command = [str(AUI), "run", "--offline", "--app", APP, "--tasks-file", str(_one_task(tmp_path)), "--rounds", "0",
               "--max-steps", "2", "--viewport", "1024x768", "--repeats", "2", "--name", "flags", "--out",
               str(tmp_path / "runs")]
    first = subprocess.run(command, cwd=ROOT, env=_env(tmp_path), capture_output=True, text=True, timeout=540)
    assert first.returncode == 0, first.stdout + first.stderr
    run_dir = tmp_path / "runs" / "flags"
    config = json.loads((run_dir / "manifest.json").read_text())["config"]
    assert config["viewport"] == {"width": 1024, "height": 768} and config["repeats"] == 2

    (result,) = read_results(run_dir).apps
    assert [repeat.repeat for repeat in result.repeats] == [1]  # repeat 0 is `tasks`, repeat 1 its own
    folders = [run_dir / outcome.trajectory for _, outcomes in result.every_repeat() for outcome in outcomes]
    assert len(folders) == 2 and folders[0] != folders[1]
    for folder in folders:
        trajectory = Trajectory.load(folder)
        assert (trajectory.viewport_width, trajectory.viewport_height) == (1024, 768)
        assert Image.open(folder / trajectory.initial_screenshot).size == (1024, 768)

    written = {path: path.stat().st_mtime_ns for path in run_dir.rglob("trajectory.json")}
    assert len(written) == 2
    again = subprocess.run(command, cwd=ROOT, env=_env(tmp_path), capture_output=True, text=True, timeout=540)
    assert again.returncode == 0, again.stdout + again.stderr
    assert {path: path.stat().st_mtime_ns for path in run_dir.rglob("trajectory.json")} == written, \
        "a re-run must take every repeat's rollout from the cache, not roll it out again"
