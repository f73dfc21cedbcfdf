"""A re-run reuses a stage's result only when the code that made it is the same (issue 29, part 1).

Each test runs the real `aui run` (as `python -m aui`) from a copy of the project in a temp
folder, changes one file of that copy, and runs the same command again: the stages whose code
changed run again, the others come from Prefect's cache, and the run says which and why.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from apps_prompts import load_app
from flows.testing import ScriptedRoles, role_of
from llm.testing import ScriptedOpenAIServer

ROOT = Path(__file__).resolve().parents[2]
APP = "unit-converter"
HEURISTIC_FILE = "cua/policies/heuristic/_match.py"


def copy_of_the_project(destination: Path) -> Path:
    """The project's tracked (and new, unignored) files, copied: a checkout whose code a test may change."""
    listed = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                            capture_output=True, text=True, check=True, timeout=60).stdout.splitlines()
    for relative in listed:
        source = ROOT / relative
        if source.is_file() and not relative.startswith(("tests/", "docs/", "bench/")):
            target = destination / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    return destination


def touch(path: Path, line: str = "# a change that changes nothing it does") -> None:
    with path.open("a", encoding="utf-8") as handle:
        handle.write(f"\n{line}\n")


def aui(project: Path, folder: Path, *args: str, name: str = "cached") -> tuple[dict, dict, str]:
    """`aui ARGS` run from `project` (its code, not this checkout's); (results' cache, manifest, output)."""
    from prefect.settings import PREFECT_API_URL

    env = {k: v for k, v in os.environ.items() if not k.startswith(("PREFECT_", "PYTEST_", "AUI_"))}
    env.update({"PYTHONPATH": str(project), "PREFECT_HOME": str(folder / "prefect-home"),
                "PREFECT_API_URL": PREFECT_API_URL.value(), "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
                "DO_NOT_TRACK": "1", "AUI_CACHE_DIR": str(folder / "cache"), "AUI_LLM_CACHE": "off", "COLUMNS": "200"})
    done = subprocess.run([sys.executable, "-m", "aui", *args], cwd=project, env=env, capture_output=True,
                          text=True, timeout=500)
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    run_dir = folder / "runs" / name
    results = json.loads((run_dir / "results.json").read_text())
    manifest = json.loads((run_dir / "manifest.json").read_text())
    return results["cache"], manifest, output


def run_offline(project: Path, folder: Path, *extra: str) -> tuple[dict, dict, str]:
    """`aui run --offline` of one app's first task, round 0 (the model call cache off: only Prefect's may answer)."""
    tasks = folder / "tasks.yaml"
    if not tasks.exists():
        chosen = [task.model_dump(mode="json", exclude_none=True) for task in load_app(APP).tasks[:1]]
        tasks.write_text(yaml.safe_dump({APP: chosen}, sort_keys=False))
    return aui(project, folder, "run", "--offline", "--app", APP, "--tasks-file", str(tasks), "--rounds", "0",
               "--max-steps", "3", "--name", "cached", "--out", str(folder / "runs"), *extra)


def ran(cache: dict) -> dict[str, int]:
    return {kind: entry["ran"] for kind, entry in cache.items()}


def reused(cache: dict) -> dict[str, int]:
    return {kind: entry["reused"] for kind, entry in cache.items()}


@pytest.mark.timeout(900)
def test_touching_the_heuristic_reruns_its_rollouts_only_and_the_readme_nothing(prefect_server, tmp_path):
    project = copy_of_the_project(tmp_path / "project")
    first, manifest, _ = run_offline(project, tmp_path)
    assert ran(first) == {"generate": 1, "propose": 1, "verify": 1, "rollout": 1}, first
    assert HEURISTIC_FILE in manifest["stage_files"]["rollout"]
    assert HEURISTIC_FILE not in manifest["stage_files"]["verify"]
    assert "cua/_harness.js" in manifest["stage_files"]["rollout"]  # JavaScript is code too

    again, _, output = run_offline(project, tmp_path)
    assert sum(ran(again).values()) == 0 and reused(again) == ran(first), again
    assert "Stage runs: " in output and "not reused" not in output

    touch(project / "README.md", "A line of documentation.")
    after_readme, manifest, _ = run_offline(project, tmp_path)
    assert sum(ran(after_readme).values()) == 0, after_readme
    assert manifest["not_reused"] == {}

    touch(project / HEURISTIC_FILE)
    after_heuristic, manifest, output = run_offline(project, tmp_path)
    assert ran(after_heuristic) == {"generate": 0, "propose": 0, "verify": 0, "rollout": 1}, after_heuristic
    assert list(manifest["not_reused"]) == ["rollout"]
    assert HEURISTIC_FILE in manifest["not_reused"]["rollout"]
    assert f"rollout: not reused — code of cua/policies/heuristic changed since" in output, output

    touch(project / HEURISTIC_FILE)
    stale, manifest, output = run_offline(project, tmp_path, "--reuse-stale")
    assert sum(ran(stale).values()) == 0, stale  # the rollouts made before this change are taken as they are
    assert manifest["reuse_stale"] is True and list(manifest["stale_reused"]) == ["rollout"]
    assert manifest["config"]["reuse_stale"] is True
    assert "--reuse-stale: rollout results reused although code of cua/policies/heuristic changed" in output, output


@pytest.mark.timeout(900)
def test_touching_the_coders_prompts_reruns_the_model_stage_that_uses_them_and_nothing_else(prefect_server, tmp_path):
    project = copy_of_the_project(tmp_path / "project")
    roles = ScriptedRoles(APP, ["swap-to-feet-metres"])
    with ScriptedOpenAIServer(roles) as server:
        models = roles.write_models_yaml(server, tmp_path / "models.yaml")
        config = tmp_path / "sweep.yaml"
        config.write_text(yaml.safe_dump({
            "name": "cached", "app_ids": [APP], "rounds": 0, "max_steps": 3, "tasks_per_app": 1,
            "coders": ["scripted"], "proposer": "scripted", "verifier": "scripted", "commenter": "offline",
            "cua_policies": ["heuristic"], "models_config": str(models), "out_dir": str(tmp_path / "runs")}))

        def calls() -> dict[str, int]:
            counted: dict[str, int] = {}
            for request in server.requests:
                counted[role_of(request)] = counted.get(role_of(request), 0) + 1
            return counted

        first, _, _ = aui(project, tmp_path, "sweep", str(config))
        made = calls()
        assert made.get("coder", 0) >= 1 and made.get("proposer", 0) >= 1 and made.get("verifier", 0) >= 1, made
        assert ran(first) == {"generate": 1, "propose": 1, "verify": 1, "rollout": 1}, first

        again, _, _ = aui(project, tmp_path, "sweep", str(config))
        assert calls() == made, "a re-run of unchanged code makes no model call"
        assert sum(ran(again).values()) == 0, again

        touch(project / "coder" / "_prompts.py")
        after, manifest, output = aui(project, tmp_path, "sweep", str(config))
        now = calls()
        assert now["coder"] > made["coder"], (made, now)  # the coder was asked again
        assert {role: n for role, n in now.items() if role != "coder"} == {r: n for r, n in made.items() if r != "coder"}
        # The same page came back, so what follows it is the same: verdicts and rollouts come from the cache.
        assert ran(after) == {"generate": 1, "propose": 0, "verify": 0, "rollout": 0}, after
        assert set(manifest["not_reused"]) == {"generate", "revise"}
        assert "coder/_prompts.py" in manifest["not_reused"]["generate"]
