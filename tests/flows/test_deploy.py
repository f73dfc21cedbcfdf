"""`aui deploy`: a scheduled sweep served by `flow.serve`, seen in the Prefect API and run from it."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from flows.testing import stop_process_group

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
NAME = "deploy-check"
CRON = "17 3 * * *"


@pytest.mark.timeout(900)
async def test_a_deployment_has_its_cron_schedule_and_a_run_triggered_through_the_api_runs_the_sweep(tmp_path, prefect_ui):
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import DeploymentFilter, DeploymentFilterName
    from prefect.settings import PREFECT_API_URL, temporary_settings

    base, env = prefect_ui
    # The served runner asks for scheduled runs every 10 s by default: every 1 s, the triggered run starts sooner.
    env = {**env, "PREFECT_RUNNER_POLL_FREQUENCY": "1"}
    config = tmp_path / "sweep.yaml"
    config.write_text(yaml.safe_dump({"name": NAME, "app_ids": ["unit-converter"], "rounds": 0, "max_steps": 2,
                                      "revision_modes": ["integrated"], "out_dir": str(tmp_path / "runs")}))
    log = (tmp_path / "deploy.log").open("wb")
    served = subprocess.Popen([str(BIN / "aui"), "deploy", str(config), "--cron", CRON, "--name", NAME],
                              cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        with temporary_settings({PREFECT_API_URL: f"{base}/api"}):
            async with get_client() as client:
                deployment = await _wait_for_deployment(client, served, tmp_path, DeploymentFilter(
                    name=DeploymentFilterName(any_=[NAME])))
                crons = [getattr(schedule.schedule, "cron", None) for schedule in deployment.schedules]
                assert CRON in crons, deployment.schedules
                assert json.loads(json.dumps(deployment.parameters))["config"]["name"] == NAME

                flow_run = await client.create_flow_run_from_deployment(deployment.id)
                deadline = time.monotonic() + 600
                while True:
                    state = (await client.read_flow_run(flow_run.id)).state
                    if state is not None and state.is_final():
                        break
                    assert served.poll() is None, (tmp_path / "deploy.log").read_text()[-3000:]
                    assert time.monotonic() < deadline, f"the triggered run did not finish: {state}"
                    await asyncio.sleep(2)
                assert state.is_completed(), (state, (tmp_path / "deploy.log").read_text()[-3000:])
    finally:
        stop_process_group(served)
        log.close()
    results = json.loads((tmp_path / "runs" / NAME / "results.json").read_text())
    assert {app["app_id"] for app in results["apps"]} == {"unit-converter"}
    assert results["table"] and results["table"][0]["round"] == 0


async def _wait_for_deployment(client, served: subprocess.Popen, tmp_path: Path, name_filter):
    deadline = time.monotonic() + 180
    while True:
        found = await client.read_deployments(deployment_filter=name_filter)
        if found:
            return found[0]
        assert served.poll() is None, (tmp_path / "deploy.log").read_text()[-3000:]
        assert time.monotonic() < deadline, "no deployment appeared within 180 s"
        await asyncio.sleep(1)
