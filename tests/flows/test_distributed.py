"""Beyond one machine: a Prefect server on PostgreSQL, the sweep's stages on a Dask cluster of two worker
processes, and the sweep deployed to a process work pool with two workers, all give the single-process
run's results. One app, two tasks, round 0, the offline providers: as cheap as the set-up allows."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

pytest.importorskip("prefect_dask", reason="prefect-dask is optional: pip install prefect-dask==0.3.7")

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
BASE = {"app_ids": ["unit-converter"], "rounds": 0, "tasks_per_app": 2, "max_steps": 3}


def outcomes(run_dir: Path) -> list[tuple]:
    """What a run found, per task: the figures that must not depend on where the stages ran."""
    data = json.loads((run_dir / "results.json").read_text())
    return sorted((app["app_id"], app["round"], task["task_id"], task["checker_valid"], task["success"],
                   task["termination"], task["steps"]) for app in data["apps"] for task in app["tasks"])


def aui(args: list[str], env: dict, log: Path, timeout: float = 600) -> None:
    with log.open("wb") as out:
        done = subprocess.run([str(BIN / "aui"), *args], cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT,
                              timeout=timeout)
    assert done.returncode == 0, log.read_text()[-3000:]


def started(command: list[str], env: dict, log: Path) -> subprocess.Popen:
    return subprocess.Popen(command, cwd=ROOT, env=env, stdout=log.open("wb"), stderr=subprocess.STDOUT,
                            start_new_session=True)


def stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=30)


@pytest.mark.timeout(900)
async def test_a_sweep_on_dask_workers_and_on_a_work_pool_against_postgres_matches_one_process(tmp_path, prefect_on_postgres):
    from prefect.client.orchestration import get_client
    from prefect.settings import PREFECT_API_URL, temporary_settings

    base, env = prefect_on_postgres
    env = {**env, "PREFECT_LOCAL_STORAGE_PATH": str(tmp_path / "results")}  # one result store for every process
    configs = {}
    for name in ("single", "dask", "pool"):
        configs[name] = tmp_path / f"{name}.yaml"
        configs[name].write_text(yaml.safe_dump({**BASE, "name": name, "out_dir": str(tmp_path / "runs")}))

    aui(["sweep", str(configs["single"])], env, tmp_path / "single.log")
    expected = outcomes(tmp_path / "runs" / "single")
    assert len(expected) == 2

    processes = []
    try:
        # A Dask cluster of two worker processes (what two machines would run), the stages spread over them.
        scheduler_file = tmp_path / "scheduler.json"
        processes.append(started([str(BIN / "dask"), "scheduler", "--host", "127.0.0.1", "--port", "0",
                                  "--no-dashboard", "--scheduler-file", str(scheduler_file)], env, tmp_path / "scheduler.log"))
        deadline = time.monotonic() + 120
        while not scheduler_file.exists():
            assert time.monotonic() < deadline, (tmp_path / "scheduler.log").read_text()[-2000:]
            await asyncio.sleep(0.2)
        address = json.loads(scheduler_file.read_text())["address"]
        for number in (1, 2):
            processes.append(started([str(BIN / "dask"), "worker", address, "--nworkers", "1", "--nthreads", "2",
                                      "--no-dashboard", "--name", f"worker-{number}"], env, tmp_path / f"dask-{number}.log"))
        aui(["sweep", str(configs["dask"]), "--task-runner", "dask", "--dask-address", address], env, tmp_path / "dask.log")
        assert outcomes(tmp_path / "runs" / "dask") == expected

        # A process work pool with two workers; the sweep deployed to it and run from the API.
        subprocess.run([str(BIN / "prefect"), "work-pool", "create", "aui-pool", "--type", "process"], env=env,
                       check=True, capture_output=True, timeout=120)
        for number in (1, 2):
            processes.append(started([str(BIN / "prefect"), "worker", "start", "--pool", "aui-pool", "--name",
                                      f"pool-worker-{number}"], env, tmp_path / f"pool-{number}.log"))
        aui(["deploy", str(configs["pool"]), "--pool", "aui-pool", "--name", "pool"], env, tmp_path / "deploy.log")
        with temporary_settings({PREFECT_API_URL: f"{base}/api"}):
            async with get_client() as client:
                deployment = await client.read_deployment_by_name("aui-sweep/pool")
                flow_run = await client.create_flow_run_from_deployment(deployment.id)
                deadline = time.monotonic() + 600
                while True:
                    state = (await client.read_flow_run(flow_run.id)).state
                    if state is not None and state.is_final():
                        break
                    assert time.monotonic() < deadline, f"the pool's run did not finish: {state}"
                    await asyncio.sleep(2)
                logs = "".join((tmp_path / f"pool-{n}.log").read_text()[-2000:] for n in (1, 2))
                assert state.is_completed(), (state, logs)
        assert outcomes(tmp_path / "runs" / "pool") == expected
    finally:
        for process in reversed(processes):
            stop(process)
