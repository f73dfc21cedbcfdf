"""Reproducibility: two offline runs of one config give the same results, and each run's manifest says how to repeat it.

The two runs have different names, so they share no run folder, no run key and no Prefect cache
entry: every stage (generation, verification, rollouts, dashboards, comments, revision) really
runs twice. Their results tables (results.csv, results.md, the `table` of results.json) and
every per-task outcome must be identical.
"""

from __future__ import annotations

import json
import re

import pytest

from experiment import make_config
from flows import ROLE_PROMPTS, sweep

APPS = ["unit-converter"]  # one app keeps the suite short; every stage of a round still runs
FAKE_OPENAI_KEY = "sk-FAKE-openai-reproducibility-0123456789"


def offline_config(tmp_path, name: str):
    return make_config({"name": name, "app_ids": APPS, "rounds": 1, "max_steps": 3, "revision_modes": ["integrated"],
                        "out_dir": str(tmp_path / "runs"), "seed": 7, "tasks_per_app": 4})


def outcomes(payload: dict) -> list[dict]:
    """Every app round's result as recorded, in a fixed order."""
    return sorted(payload["apps"], key=lambda r: (r["app_id"], r["coder"], r["cua"], r["mode"], r["round"]))


@pytest.mark.timeout(900)
async def test_two_offline_runs_of_one_config_give_identical_results_and_a_complete_manifest(
        tmp_path, prefect_server, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_OPENAI_KEY)  # present in the environment, never in a manifest
    first, second = offline_config(tmp_path, "repro-a"), offline_config(tmp_path, "repro-b")

    results_a = await sweep(first)
    results_b = await sweep(second)

    assert (first.run_dir / ".run-key").read_text() != (second.run_dir / ".run-key").read_text()
    for name in ("results.csv", "results.md"):
        assert (first.run_dir / name).read_bytes() == (second.run_dir / name).read_bytes(), name
    payload_a = json.loads((first.run_dir / "results.json").read_text())
    payload_b = json.loads((second.run_dir / "results.json").read_text())
    assert payload_a["table"] == payload_b["table"]
    assert payload_a["best_round"] == payload_b["best_round"]
    assert outcomes(payload_a) == outcomes(payload_b)
    assert [r.model_dump() for r in results_a] == [r.model_dump() for r in results_b]
    # Not vacuous: the app's both rounds, tasks that ran, some solved.
    assert {(r.app_id, r.round) for r in results_a} == {(a, n) for a in APPS for n in (0, 1)}
    tasks = [t for r in results_a for t in r.tasks]
    assert any(t.success for t in tasks) and any(t.termination for t in tasks)
    # The same versions of the apps were judged: byte-identical HTML in both run folders.
    for result in results_a:
        assert (first.run_dir / result.html).read_bytes() == (second.run_dir / result.html).read_bytes()

    manifest_a = json.loads((first.run_dir / "manifest.json").read_text())
    manifest_b = json.loads((second.run_dir / "manifest.json").read_text())
    for field in ("python", "packages", "chromium", "git_commit", "models", "prompt_hashes", "prompt_versions",
                  "seed", "seeds", "inputs", "offline", "config"):
        assert field in manifest_a, f"manifest lacks {field}"
    assert manifest_a["packages"]["prefect"] == "3.8.8" and manifest_a["packages"]["playwright"]
    assert manifest_a["packages"]["openai"]
    assert manifest_a["chromium"].lower().startswith("chromium"), manifest_a["chromium"]
    assert manifest_a["git_commit"] and re.fullmatch(r"[0-9a-f]{40}(\+dirty)?", manifest_a["git_commit"])
    assert set(manifest_a["prompt_hashes"]) == set(ROLE_PROMPTS)
    assert all(re.fullmatch(r"[0-9a-f]{64}", sha) for files in manifest_a["prompt_hashes"].values()
               for sha in files.values())
    assert manifest_a["seeds"]["config"] == manifest_a["seed"] == 7
    assert set(manifest_a["inputs"]["apps"]) == set(APPS)
    assert manifest_a["config"] == json.loads(first.model_dump_json())
    assert manifest_a["offline"] is True and manifest_a["models"] == {}
    # Everything but the run's name is the same in both manifests: the manifest is itself reproducible.
    for field in ("packages", "chromium", "prompt_hashes", "prompt_versions", "seeds", "inputs", "models"):
        assert manifest_a[field] == manifest_b[field], field
    assert {**manifest_a["config"], "name": None} == {**manifest_b["config"], "name": None}

    text = (first.run_dir / "manifest.json").read_text()
    assert FAKE_OPENAI_KEY not in text and "api_key" not in text
