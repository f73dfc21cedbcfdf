"""A run says how big it is before it starts, and a run too big is refused unless told `--yes`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from experiment import check_config, make_config, run_size, tasks_per_app

ROOT = Path(__file__).resolve().parents[2]
AUI = Path(sys.executable).with_name("aui")
APP = "unit-converter"


def _aui(*args: str, cwd: Path, env_home: Path, api_url: str | None = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PREFECT_", "PYTEST_"))}
    env.update({"PREFECT_HOME": str(env_home), "PREFECT_SERVER_ANALYTICS_ENABLED": "false", "DO_NOT_TRACK": "1",
                "COLUMNS": "200"})
    if api_url:  # the session's server: a temporary one would take ≈ 20 s to start (the stop-signal tests keep that path)
        env["PREFECT_API_URL"] = api_url
    return subprocess.run([str(AUI), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=900)


def test_ten_thousand_tasks_for_one_app_are_refused_before_anything_starts(tmp_path):
    tasks = [{"id": f"t{i}", "description": f"Do thing {i}", "category": "core_function", "expected_outcome": "done"}
             for i in range(10_000)]
    tasks_file = tmp_path / "tasks.yaml"
    tasks_file.write_text(yaml.safe_dump({APP: tasks}))
    started = time.monotonic()
    done = _aui("run", "--offline", "--app", APP, "--tasks-file", str(tasks_file), "--name", "huge",
                "--out", str(tmp_path / "runs"), cwd=ROOT, env_home=tmp_path / "prefect")
    assert done.returncode == 2, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:"), done.stderr
    assert "10,000 tasks" in lines[0] and "at most 100 per app" in lines[0] and "max_tasks_per_app" in lines[0]
    assert not (tmp_path / "runs" / "huge").exists(), "nothing was started"
    assert time.monotonic() - started < 120


@pytest.mark.timeout(900)
def test_a_run_larger_than_max_rollouts_needs_yes_and_its_printed_size_is_what_it_does(tmp_path, prefect_server):
    from prefect.settings import PREFECT_API_URL

    config = tmp_path / "sweep.yaml"
    config.write_text(yaml.safe_dump({"name": "sized", "app_ids": [APP], "rounds": 0, "max_steps": 3,
                                      "max_rollouts": 3, "out_dir": str(tmp_path / "runs")}))
    refused = _aui("sweep", str(config), cwd=ROOT, env_home=tmp_path / "prefect")
    assert refused.returncode == 2 and "more than max_rollouts (3)" in refused.stderr and "--yes" in refused.stderr
    assert not (tmp_path / "runs" / "sized").exists()

    ran = _aui("sweep", str(config), "--yes", cwd=ROOT, env_home=tmp_path / "prefect", api_url=PREFECT_API_URL.value())
    assert ran.returncode == 0, ran.stderr[-3000:]
    size_line = next(line for line in ran.stdout.splitlines() if line.startswith("run size:"))
    payload = json.loads((tmp_path / "runs" / "sized" / "results.json").read_text())
    rolled_out = sum(1 for app in payload["apps"] for task in app["tasks"] if task["trajectory"])
    assert f"at most {rolled_out} rollouts" in size_line, (size_line, rolled_out)
    assert "no model calls (offline providers)" in size_line
    power_line = next(line for line in ran.stdout.splitlines() if line.startswith("with "))
    assert f"with {rolled_out} task(s) per round, a change in SR smaller than ≈ " in power_line, power_line


def test_the_size_says_the_smallest_difference_in_sr_the_run_can_tell_from_noise():
    # (z_0.975 + z_0.8) · √(0.5 / n): 103 tasks → 2.801585 · 0.0696733 = 19.5 points; 4 × the tasks halves it
    config = make_config({"rounds": 2})
    size = run_size(config, {"a": 50, "b": 53})
    assert size.detectable_difference == pytest.approx(0.195195, abs=1e-6)
    assert size.describe_power().startswith("with 103 task(s) per round, a change in SR smaller than ≈ 19.5 points")
    assert "95 %, 80 % power" in size.describe_power()
    repeated = run_size(make_config({"rounds": 2, "repeats": 3}), {"a": 206, "b": 206})
    assert "≈ 9.8 points" in repeated.describe_power() and "3 repeats" in repeated.describe_power()


def test_model_calls_and_cost_are_bounded_from_both_sides(tmp_path):
    models = tmp_path / "models.yaml"
    models.write_text(yaml.safe_dump({"models": [
        {"name": "priced", "provider": "openai-compatible", "model": "m", "base_url": "http://127.0.0.1:9/v1",
         "api_key": "x", "prices": {"input_usd_per_1m": 1.0, "output_usd_per_1m": 2.0}},
        {"name": "free", "provider": "openai-compatible", "model": "m", "base_url": "http://127.0.0.1:9/v1", "api_key": "x"},
    ], "roles": {"cua": "priced"}}))
    config = make_config({"app_ids": [APP], "rounds": 1, "max_steps": 10, "cua_policies": ["uitars"],
                          "commenter": "priced", "models_config": str(models)})
    counts = tasks_per_app(config, check_config(config, probe_endpoints=False).app_ids)
    size = run_size(config, counts)
    tasks = counts[APP]
    assert size.rollouts == tasks * 2 and size.steps == tasks * 2 * 10
    assert (size.by_role["cua"].calls_low, size.by_role["cua"].calls_high) == (tasks * 2, tasks * 2 * 10)
    assert size.by_role["commenter"].calls_low == 0 and size.by_role["commenter"].calls_high == 2 * tasks
    low, high = size.cost
    assert 0 < low < high
    unpriced = run_size(make_config({**config.model_dump(), "commenter": "free"}), counts)
    assert unpriced.cost is None and "cost unknown" in unpriced.describe()
