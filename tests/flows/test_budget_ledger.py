"""One budget for every process of a run (issue 38 §5): the ledger on the Prefect server.

Processes that make a run's model calls — the flow's, and a Dask worker's or another machine's — charge
the same global concurrency limits on the run's Prefect server: the server takes a call atomically, so
two processes racing for the last calls of a budget take exactly what is left between them. Here two real
processes race against the test harness's server (itself a separate process, as a run's server is), each
reading the run's limits from `<run>/budget.json` as a Dask worker does; the flow's side writes and reads
the spending. `tests/flows/test_distributed.py` runs a whole sweep on a Dask cluster under a budget.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from experiment import RunBudget
from flows._budget import BUDGET_FILE, budget_for_stage, budget_line, run_budget
from llm import BudgetLimits, BudgetReached

ROOT = Path(__file__).resolve().parents[2]

# A process of the run other than the flow's: the stage's side (flows._budget.budget_for_stage), 10 calls at once.
CALLER = """
import asyncio, json, pathlib, sys, time, types
from flows._budget import budget_for_stage
from llm import BudgetReached

run = types.SimpleNamespace(run_dir=sys.argv[1], run_key=sys.argv[2])
budget = budget_for_stage(run)
assert budget is not None, "no ledger in budget.json"
pathlib.Path(sys.argv[3]).touch()
while not pathlib.Path(sys.argv[4]).exists():
    time.sleep(0.02)

async def one():
    try:
        await budget.start_call("cua", "scripted")
        return 1
    except BudgetReached:
        return 0

async def main():
    print(json.dumps(sum(await asyncio.gather(*(one() for _ in range(10))))))

asyncio.run(main())
"""


def _race(run_dir: Path, run_key: str, api_url: str, tmp: Path) -> list[int]:
    """Two processes each try 10 calls at the same moment; what each was allowed."""
    env = {**__import__("os").environ, "PREFECT_API_URL": api_url}
    go = tmp / f"go-{uuid.uuid4().hex[:6]}"
    ready = [tmp / f"ready-{uuid.uuid4().hex[:6]}" for _ in range(2)]
    callers = [subprocess.Popen([sys.executable, "-c", CALLER, str(run_dir), run_key, str(mark), str(go)], cwd=ROOT,
                                env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE) for mark in ready]
    try:
        while not all(mark.exists() for mark in ready):
            assert all(c.poll() is None for c in callers), [c.communicate()[1][-2000:] for c in callers]
            __import__("time").sleep(0.05)
        go.touch()
        outputs = [c.communicate(timeout=300) for c in callers]
    finally:
        for c in callers:
            c.kill() if c.poll() is None else None
    assert [c.returncode for c in callers] == [0, 0], [err.decode()[-2000:] for _, err in outputs]
    return [int(out.decode().strip().splitlines()[-1]) for out, _ in outputs]


@pytest.mark.timeout(600)
async def test_processes_racing_for_the_last_calls_take_exactly_the_budget_between_them(tmp_path, prefect_server):
    from prefect.settings import PREFECT_API_URL

    run_dir, run_key = tmp_path / "run", uuid.uuid4().hex
    async with run_budget(RunBudget(max_model_calls=7), run_dir, run_key, shared=True) as live:
        saved = json.loads((run_dir / BUDGET_FILE).read_text())
        assert saved["ledger"] == "prefect" and saved["limits"]["max_model_calls"] == 7  # before any stage runs
        taken = await asyncio.to_thread(_race, run_dir, run_key, PREFECT_API_URL.value(), tmp_path)
        assert live.reached is None  # the refusals were the other processes'
    assert sum(taken) == 7, taken  # 20 tried: without one ledger each process would allow 7 (14), or 10 with none
    saved = json.loads((run_dir / BUDGET_FILE).read_text())
    assert saved["spent"]["*"]["calls"] == 7 and saved["reached"] == "the run has made 7 of its 7 model calls"
    assert budget_line(run_dir).startswith("budget reached: the run has made 7 of its 7 model calls")

    # Started again with a higher budget: 2 more calls, wherever they are made.
    async with run_budget(RunBudget(max_model_calls=9), run_dir, run_key, shared=True):
        taken = await asyncio.to_thread(_race, run_dir, run_key, PREFECT_API_URL.value(), tmp_path)
    assert sum(taken) == 2, taken
    assert json.loads((run_dir / BUDGET_FILE).read_text())["spent"]["*"]["calls"] == 9


async def test_dollars_spent_in_one_process_stop_the_calls_of_another_and_roles_have_their_own_limits(
        tmp_path, prefect_server):
    run_dir, run_key = tmp_path / "run", uuid.uuid4().hex
    budget = RunBudget(max_cost_usd=1.0, roles={"commenter": BudgetLimits(max_model_calls=1)})
    async with run_budget(budget, run_dir, run_key, shared=True) as flow_side:
        worker = budget_for_stage(type("Run", (), {"run_dir": str(run_dir), "run_key": run_key})())
        await worker.start_call("commenter:dashboard", "m")
        with pytest.raises(BudgetReached, match="role 'commenter' has made 1 of its 1 model calls"):
            await flow_side.start_call("commenter:text-only", "m")
        await worker.start_call("cua", "m")
        await worker.add_cost("cua", 0.6)
        await flow_side.start_call("coder", "m")
        await flow_side.add_cost("coder", 0.4000001)  # counted in units of $0.00001, rounded up
        with pytest.raises(BudgetReached, match=r"the run has spent \$1 of its \$1"):
            await worker.start_call("cua", "m")
    saved = json.loads((run_dir / BUDGET_FILE).read_text())
    assert saved["spent"]["*"] == {"calls": 3, "cost_usd": pytest.approx(1.00001)}
    assert saved["spent"]["commenter"]["calls"] == 1
    assert saved["reached"] == "role 'commenter' has made 1 of its 1 model calls"  # the first refusal, this process's


async def test_without_a_shared_server_the_budget_stays_in_the_process_and_writes_no_ledger(tmp_path):
    run_dir = tmp_path / "run"
    async with run_budget(RunBudget(max_model_calls=1), run_dir, "local", shared=False) as live:
        assert not (run_dir / BUDGET_FILE).exists()
        await live.start_call("cua", "m")
        with pytest.raises(BudgetReached):
            await live.start_call("cua", "m")
    saved = json.loads((run_dir / BUDGET_FILE).read_text())
    assert "ledger" not in saved and saved["spent"]["cua"]["calls"] == 1
    assert budget_for_stage(type("Run", (), {"run_dir": str(run_dir), "run_key": "local"})()) is None
