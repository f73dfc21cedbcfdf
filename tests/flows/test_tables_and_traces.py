"""Commenter modes as a sweep axis (Table 5), SR (FC) per CUA (Table 4), SR over supported tasks, and traces."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

from experiment import make_config
from flows import sweep

APP = "unit-converter"
EXAMPLE = str(Path(__file__).resolve().parents[2] / "configs" / "sweep.example.yaml")


@pytest.mark.timeout(900)
async def test_commenter_modes_are_tracks_and_failed_rollouts_keep_their_traces(tmp_path, prefect_server):
    config = make_config({"name": "tables", "app_ids": [APP], "rounds": 1, "max_steps": 3, "trace": "failures",
                          "tasks_per_app": 3,  # two that fail in 3 steps, one that succeeds: all the test needs
                          "revision_modes": ["integrated", "unsupported"], "commenter_modes": ["dashboard", "text-only"],
                          "out_dir": str(tmp_path)})
    results = await sweep(config)
    tracks = {(r.mode, r.commenter_mode) for r in results}
    assert tracks == {("integrated", "dashboard"), ("integrated", "text-only"), ("unsupported", None)}
    assert len({r.html for r in results if r.round == 1}) == 3, "every track revises into its own folder"

    run_dir = config.run_dir
    traced = failed = 0
    for result in results:
        for task in result.tasks:
            if task.trajectory is None:
                continue
            trace = run_dir / task.trajectory / "trace.zip"
            if task.success:
                assert task.trace is None and not trace.exists(), "a successful rollout's trace is not kept with `failures`"
            else:
                failed += 1
                assert task.trace == f"{task.trajectory}/trace.zip" and zipfile.is_zipfile(trace)
                traced += 1
    assert failed and traced == failed

    payload = json.loads((run_dir / "results.json").read_text())
    for row in payload["table"]:
        assert row["sr_supported"]["overall"] is None or row["sr_supported"]["overall"] >= row["sr"]["overall"]
    assert {row["commenter"] for row in payload["by_commenter_mode"]} == {"dashboard", "text-only"}
    assert all(row["tokens"] == 0 for row in payload["by_commenter_mode"]), "the offline commenter uses no tokens"
    assert {row["commenter"] for row in payload["by_cua"]} == {"dashboard", "text-only", "–"}
    assert all(" (" in row["heuristic"] for row in payload["by_cua"]), "cells read SR (FC)"
    markdown = (run_dir / "results.md").read_text()
    assert "Table 4 shape" in markdown and "Table 5 shape" in markdown and "SR (supported)" in markdown
    report = (run_dir / "report.html").read_text()
    assert "playwright show-trace" in report and "By commenter mode" in report


def _trajectories(results):
    return [task for result in results for task in result.tasks if task.trajectory is not None]


@pytest.mark.timeout(900)
async def test_trace_all_keeps_every_rollouts_trace_and_the_manifest_records_the_runs_browser(
        tmp_path, prefect_server, monkeypatch):
    # The run's browser setting, not a default: turn the in-page select picker off for this run's
    # rollouts; the manifest must say off, as every trajectory does.
    from cua import BrowserConfig, default_chromium, is_headless_shell
    from flows import _rollouts

    monkeypatch.setattr(_rollouts, "run_browser_config",
                        lambda viewport: BrowserConfig(viewport=viewport, in_page_select_picker=False))
    config = make_config({"name": "trace-all", "app_ids": [APP], "rounds": 0, "max_steps": 3, "trace": "all",
                          "out_dir": str(tmp_path)})
    results = await sweep(config)
    run_dir = config.run_dir
    tasks = _trajectories(results)
    assert {t.success for t in tasks} == {True, False}, "the run should have successes and failures"
    for task in tasks:
        assert task.trace == f"{task.trajectory}/trace.zip" and zipfile.is_zipfile(run_dir / task.trace), task.task_id
        trajectory = json.loads((run_dir / task.trajectory / "trajectory.json").read_text())
        assert trajectory["in_page_select_picker"] is False
        assert trajectory["chromium"] == default_chromium() and trajectory["chromium_version"], "the binary that ran"
    manifest = json.loads((run_dir / "manifest.json").read_text())
    browser = manifest["browser"]
    assert {key: browser[key] for key in ("viewport", "in_page_select_picker", "headless", "binary", "headless_shell")} == {
        "viewport": "1280x720", "in_page_select_picker": False, "headless": True, "binary": default_chromium(),
        "headless_shell": is_headless_shell(default_chromium())}
    assert "--force-webrtc-ip-handling-policy=disable_non_proxied_udp" in browser["args"]
    assert manifest["chromium_path"] == default_chromium()
    report = (run_dir / "report.html").read_text()
    for task in tasks:  # each trace linked with the command that opens it, successes too
        assert f"playwright show-trace {task.trace}</code>" in report, task.task_id


@pytest.mark.timeout(900)
async def test_trace_off_keeps_no_trace(tmp_path, prefect_server):
    config = make_config({"name": "trace-off", "app_ids": [APP], "rounds": 0, "max_steps": 3, "trace": "off",
                          "out_dir": str(tmp_path)})
    results = await sweep(config)
    tasks = _trajectories(results)
    assert tasks and {t.success for t in tasks} == {True, False}
    assert all(t.trace is None for t in tasks)
    assert not list(config.run_dir.rglob("trace.zip"))
    assert "playwright show-trace" not in (config.run_dir / "report.html").read_text()
