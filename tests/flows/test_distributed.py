"""Beyond one machine: a Prefect server on PostgreSQL, the sweep's stages on a Dask cluster of two worker
processes, and the sweep deployed to a process work pool with two workers, all give the single-process
run's results; on Dask a second run is all cache; and a model's max_concurrency holds across two
processes (a global concurrency limit on that server). One app, two tasks, round 0 (rounds 0 and 1 on
Dask, so the comment and revision stages run there too), the offline providers: as cheap as the set-up
allows."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from flows.testing import stop_process_groups

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


def scheduler_task_prefixes(address: str) -> set[str]:
    """The names of the tasks the Dask scheduler at `address` has run (Prefect's task names)."""
    from distributed import Client

    with Client(address, timeout=60) as client:
        return set(client.run_on_scheduler(lambda dask_scheduler: sorted(dask_scheduler.task_prefixes)))


CALLER = """
import asyncio, os, pathlib, sys, time
from flows._limits import use_cross_process_limits
from llm import ModelClient, load_model_registry, user_message

use_cross_process_limits()  # AUI_GLOBAL_MODEL_LIMITS=1 and PREFECT_API_URL: the limit is the server's too
client = ModelClient(load_model_registry(sys.argv[1]), cache=False)
pathlib.Path(sys.argv[2]).touch()  # ready
while not pathlib.Path(sys.argv[3]).exists():  # both processes start calling at once
    time.sleep(0.05)

async def main():
    await asyncio.gather(*(client.chat([user_message(f"{os.getpid()} {n}")], model="m") for n in range(4)))

asyncio.run(main())
"""


def max_in_flight_across_two_processes(tmp_path: Path, env: dict) -> None:
    """A model's max_concurrency holds across two processes (Prefect global concurrency limits on the server)."""
    from llm import Latency
    from llm.testing import LatencyOpenAIServer, reply_text

    env = {**env, "AUI_GLOBAL_MODEL_LIMITS": "1"}
    with LatencyOpenAIServer(lambda request: reply_text("ok"), Latency.fixed(1.0)) as server:
        models = tmp_path / "models.yaml"
        models.write_text(yaml.safe_dump({"roles": {}, "models": [
            {"name": "m", "provider": "openai-compatible", "model": "m", "base_url": server.base_url,
             "max_concurrency": 2, "timeout_s": 60, "max_retries": 0}]}))
        go = tmp_path / "go"
        callers = [subprocess.Popen([sys.executable, "-c", CALLER, str(models), str(tmp_path / f"ready-{n}"), str(go)],
                                    cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT) for n in (1, 2)]
        deadline = time.monotonic() + 180
        while not all((tmp_path / f"ready-{n}").exists() for n in (1, 2)):
            assert all(c.poll() is None for c in callers), [c.communicate()[0][-2000:] for c in callers]
            assert time.monotonic() < deadline, "the callers did not start"
            time.sleep(0.1)
        go.touch()
        outputs = [c.communicate(timeout=180)[0].decode(errors="replace") for c in callers]
        assert [c.returncode for c in callers] == [0, 0], [o[-2000:] for o in outputs]
    assert len(server.distinct_requests()) == 8
    # Each process alone allows 2: without the shared limit the two would have 4 in flight.
    assert server.max_in_flight == 2


async def budgeted_sweep_on_the_cluster(tmp_path: Path, env: dict, address: str) -> None:
    """A paid model under `--max-model-calls 4`, the stages on two Dask workers: 4 calls in all (coder, proposer,
    verifier, one CUA step), though both workers roll out at once and each would allow 4 on its own."""
    from flows import budget_line
    from flows.testing import ONLINE_ROLES, ScriptedRoles, click_point
    from llm.testing import ScriptedOpenAIServer

    roles = ScriptedRoles("unit-converter", ["swap-to-feet-metres", "miles-to-km"],
                          clicks={"swap-to-feet-metres": await click_point("unit-converter", "#swap")})
    with ScriptedOpenAIServer(roles) as server:
        config = tmp_path / "budget.yaml"
        config.write_text(yaml.safe_dump({**BASE, **ONLINE_ROLES, "name": "budget", "out_dir": str(tmp_path / "runs"),
                                          "models_config": str(roles.write_models_yaml(server, tmp_path / "models.yaml"))}))
        done = await asyncio.to_thread(subprocess.run, [
            str(BIN / "aui"), "sweep", str(config), "--task-runner", "dask", "--dask-address", address,
            "--max-model-calls", "4"], cwd=ROOT, env={**env, "AUI_LLM_CACHE": "off"}, capture_output=True, text=True,
            timeout=600)
        assert done.returncode == 3, done.stdout[-3000:] + done.stderr[-3000:]  # exit 3: stopped by its budget
        assert len(server.requests) == 4, [request.path for request in server.requests]
    run_dir = tmp_path / "runs" / "budget"
    assert budget_line(run_dir).startswith("budget reached: the run has made 4 of its 4 model calls")
    assert "budget reached: the run has made 4 of its 4 model calls" in done.stderr
    errors = [error for app in json.loads((run_dir / "results.json").read_text())["apps"] for error in app["errors"]]
    assert any("1 rollout(s) not finished: budget reached" in error for error in errors), errors


@pytest.mark.timeout(1500)  # ≈ 3 min on a quiet machine; a machine loaded 20× over took 15
async def test_a_sweep_on_dask_workers_and_on_a_work_pool_against_postgres_matches_one_process(tmp_path, prefect_on_postgres):
    """(One server for both, to keep the suite short: first, model limits across processes.)"""
    from prefect.client.orchestration import get_client
    from prefect.settings import PREFECT_API_URL, temporary_settings

    base, env = prefect_on_postgres
    await asyncio.to_thread(max_in_flight_across_two_processes, tmp_path, env)
    env = {**env, "PREFECT_LOCAL_STORAGE_PATH": str(tmp_path / "results")}  # one result store for every process
    configs = {}
    for name in ("single", "dask", "pool"):
        configs[name] = tmp_path / f"{name}.yaml"
        rounds = {"rounds": 1} if name == "dask" else {}  # the comment and revision stages on the cluster too
        configs[name].write_text(yaml.safe_dump({**BASE, **rounds, "name": name, "out_dir": str(tmp_path / "runs")}))

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
        dask_sweep = ["sweep", str(configs["dask"]), "--task-runner", "dask", "--dask-address", address]
        aui(dask_sweep, env, tmp_path / "dask.log")
        dask_run = tmp_path / "runs" / "dask"
        assert [row for row in outcomes(dask_run) if row[1] == 0] == expected
        assert {row[1] for row in outcomes(dask_run)} == {0, 1}
        # Every stage of a round, the revision's too, ran on the cluster's workers.
        prefixes = await asyncio.to_thread(scheduler_task_prefixes, address)
        assert {"generate_initial", "verify_version", "rollout_task", "comment_failures", "revise_version"} <= prefixes
        # Run again on the cluster: every stage comes from Prefect's cache, no rollout is redone.
        trajectories = {p: p.stat().st_mtime_ns for p in dask_run.rglob("trajectory.json")}
        aui(dask_sweep, env, tmp_path / "dask-again.log")
        assert {p: p.stat().st_mtime_ns for p in dask_run.rglob("trajectory.json")} == trajectories

        await budgeted_sweep_on_the_cluster(tmp_path, env, address)

        # A process work pool with two workers; the sweep deployed to it and run from the API.
        subprocess.run([str(BIN / "prefect"), "work-pool", "create", "aui-pool", "--type", "process"], env=env,
                       check=True, capture_output=True, timeout=120)
        # A worker asks for scheduled runs every 10 s by default: every 1 s, the triggered run starts sooner.
        pool_env = {**env, "PREFECT_WORKER_QUERY_SECONDS": "1"}
        for number in (1, 2):
            processes.append(started([str(BIN / "prefect"), "worker", "start", "--pool", "aui-pool", "--name",
                                      f"pool-worker-{number}"], pool_env, tmp_path / f"pool-{number}.log"))
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
        # Prefect's process workers sat out any grace after SIGTERM (30 s, twice in turn, at 4a2221e): 10 s, all at once
        stop_process_groups(processes, grace_s=10)
