"""The whole loop, offline, under a real Prefect server: results, report, artifacts, resume."""

from __future__ import annotations

import json

import pytest

from experiment import make_config
from flows import sweep

APPS = ["unit-converter", "rgb-color-mixer"]


@pytest.fixture(scope="module")
def offline_run(tmp_path_factory, prefect_server):
    out = tmp_path_factory.mktemp("runs")
    config = make_config({"name": "two-apps", "app_ids": APPS, "rounds": 1, "out_dir": str(out), "max_steps": 5,
                          "tasks_per_app": 4, "insights": True})  # the loop, not the task count, is under test: keeps the suite short
    return config


@pytest.mark.timeout(1200)
async def test_offline_loop_runs_two_apps_two_rounds_and_writes_everything(offline_run):
    config = offline_run
    results = await sweep(config)
    run_dir = config.run_dir
    assert {(r.app_id, r.round) for r in results} == {(a, k) for a in APPS for k in (0, 1)}
    for result in results:
        assert result.tasks and all(t.checker_valid for t in result.tasks)  # reference checkers pass the gate
        assert (run_dir / result.html).is_file()
        assert "coder" in result.offline_roles and "cua" in result.offline_roles
    revised = [r for r in results if r.round == 1]
    assert all(r.contract and r.contract["status"] != "violated" for r in revised)

    payload = json.loads((run_dir / "results.json").read_text())
    overall = {row["round"]: row["sr"]["overall"] for row in payload["table"]}
    assert set(overall) == {0, 1}
    assert "coder" in payload["offline_roles"]
    assert (run_dir / "results.csv").read_text().startswith("coder,cua,mode,round,domain")
    assert "| offline | heuristic | integrated | 0" in (run_dir / "results.md").read_text()
    report = (run_dir / "report.html").read_text()
    assert "Offline providers" in report and 'id="plot"' in report
    for result in results:
        for task in result.tasks:
            if task.dashboard:
                assert (run_dir / task.dashboard).is_file()
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["packages"]["prefect"] == "3.8.8" and manifest["offline"] is True
    # `insights: true`: the principle table is in insights.json and the report, over the revisions of this run
    insights = json.loads((run_dir / "insights.json").read_text())
    assert insights["offline"] and insights["pairs"] == sum(len(r.tasks) for r in revised)
    assert insights["changes"] and all(c["round"] == 1 for c in insights["changes"])
    assert "<h2>Design insights</h2>" in report


@pytest.mark.timeout(1200)
async def test_rerunning_a_finished_sweep_repeats_no_stage(offline_run):
    config = offline_run
    run_dir = config.run_dir
    trajectories = sorted(run_dir.rglob("trajectory.json"))
    assert trajectories, "the first test's run should have written trajectories"
    before = {p: p.stat().st_mtime_ns for p in trajectories}
    results = await sweep(config)
    assert len(results) == 4
    after = {p: p.stat().st_mtime_ns for p in sorted(run_dir.rglob("trajectory.json"))}
    assert after == before, "a cached re-run must not roll out again"


async def test_artifacts_are_in_prefect(offline_run, prefect_server):
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterKey

    # By key: the session's one test server holds hundreds of artifacts by now, and an unfiltered read returns
    # one page of 200 in id (random UUID) order.
    prefixes = ("fc-sr-two-apps-round-", "unit-converter-offline-heuristic-integrated-round-", "summary-unit-converter",
                "progress-two-apps", "insights-two-apps")
    async with get_client() as client:
        artifacts = [artifact for prefix in prefixes for artifact in await client.read_artifacts(
            artifact_filter=ArtifactFilter(key=ArtifactFilterKey(like_=prefix)))]
    keys = {a.key for a in artifacts if a.key}
    assert any(k.startswith("fc-sr-two-apps-round-") for k in keys)
    assert any(k.startswith("unit-converter-offline-heuristic-integrated-round-") for k in keys)
    assert any(k.startswith("summary-unit-converter") for k in keys)
    assert "progress-two-apps" in keys
    principles = next(a for a in artifacts if a.key == "insights-two-apps")  # the principle table, as a table
    principle_rows = json.loads(principles.data) if isinstance(principles.data, str) else principles.data
    written = json.loads((offline_run.run_dir / "insights.json").read_text())["principles"]
    assert {(row["principle"], row["applied"], row["unverifiable"], row["revisions"]) for row in principle_rows} == {
        (row["principle"], str(row["applied"]), str(row["unverifiable"]), str(row["revisions"])) for row in written}
    # the FC/SR table has the weighted score beside FC and SR for each domain with tasks and overall
    table = next(a for a in artifacts if a.key == "fc-sr-two-apps-round-1")
    rows = json.loads(table.data) if isinstance(table.data, str) else table.data
    assert rows and all(f"weighted {domain}" in row and f"SR {domain}" in row
                        for row in rows for domain in ("tool", "interactive", "overall"))
    payload = json.loads((offline_run.run_dir / "results.json").read_text())
    last = next(row for row in payload["table"] if row["round"] == 1)
    assert rows[0]["weighted tool"] == f"{100 * last['weighted']['tool']:.1f}"
