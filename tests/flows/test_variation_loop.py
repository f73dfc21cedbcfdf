"""Variations in the loop (issue 17): each other variation proven and rolled out every round, the `german`
one translated through the real `openai` client (a scripted translator), and a re-run that calls no
model and rolls nothing out again. An offline run that asks for `german` is refused in one line.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from apps_prompts import load_app
from cua import Trajectory
from experiment import make_config
from flows import sweep
from flows.testing import TRANSLATED_PREFIX, ScriptedRoles, role_of
from llm.testing import ScriptedOpenAIServer
from results import read_results

APP = "unit-converter"
TASKS = ["swap-to-feet-metres", "miles-to-km"]
ROOT = Path(__file__).resolve().parents[2]


def _tasks_file(path: Path) -> Path:
    spec = load_app(APP)
    tasks = [t.model_dump(mode="json", exclude_none=True) for t in spec.tasks if t.id in TASKS]
    path.write_text(yaml.safe_dump({APP: tasks}), encoding="utf-8")
    return path


@pytest.mark.timeout(900)
async def test_every_variation_is_proven_rolled_out_and_cached_and_german_is_translated_by_the_translator(
        tmp_path, prefect_server, monkeypatch):
    monkeypatch.setenv("AUI_LLM_CACHE", "off")  # only Prefect's cache may make the re-run free
    roles = ScriptedRoles(APP, TASKS)
    with ScriptedOpenAIServer(roles) as server:
        models = roles.write_models_yaml(server, tmp_path / "models.yaml")
        config = make_config({
            "name": "varied", "app_ids": [APP], "rounds": 0, "tasks_file": str(_tasks_file(tmp_path / "tasks.yaml")),
            "variations": ["dark", "german", "popup"], "translator": "translator", "max_steps": 4,
            "out_dir": str(tmp_path / "runs"), "models_config": str(models)})

        (result,) = await sweep(config)

        assert [role_of(r) for r in server.distinct_requests()] == ["translator"]  # everything else is offline
        texts = json.loads(server.requests[0].json["messages"][-1]["content"])["texts"]
        assert "Length" in texts and "Saved conversions" in texts
        assert [v.variation for v in result.variations] == ["dark", "german", "popup"]
        run_dir = config.run_dir
        for variation in result.variations:
            assert variation.error is None and set(variation.kept) | set(variation.excluded) == set(TASKS)
            assert all(reason for reason in variation.excluded.values())
            assert (run_dir / variation.proof).is_file()
            for outcome in variation.tasks:
                trajectory = Trajectory.load(run_dir / outcome.trajectory)
                assert trajectory.transform.split("@")[0] == variation.variation
                assert trajectory.transform_sha256 == variation.transform_sha256
        german = next(v for v in result.variations if v.variation == "german")
        shown = Trajectory.load(run_dir / german.tasks[0].trajectory).final_text
        assert f"{TRANSLATED_PREFIX}Length" in shown and "\nLength\n" not in shown
        payload = read_results(run_dir)
        (row,) = payload.variations
        assert row["variations"] == ["default", "dark", "german", "popup"] and row["tasks_common"] <= len(TASKS)

        before = {path: path.stat().st_mtime_ns for path in run_dir.rglob("trajectory.json")}
        requests = len(server.requests)
        (again,) = await sweep(config)
        assert len(server.requests) == requests, "a re-run must not call any model"
        assert {path: path.stat().st_mtime_ns for path in run_dir.rglob("trajectory.json")} == before, \
            "a re-run must not roll anything out again"
        assert again.model_dump() == result.model_dump()


def test_an_offline_run_that_asks_for_german_is_refused_in_one_line(tmp_path):
    env = {**os.environ, "PREFECT_HOME": str(tmp_path / "prefect")}
    done = subprocess.run([sys.executable, "-m", "aui", "run", "--offline", "--variations", "dark,german",
                           "--out", str(tmp_path / "runs")], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:") and "translator" in lines[0] and "german" in lines[0], done.stderr
    assert not (tmp_path / "runs").exists()
