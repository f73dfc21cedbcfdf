"""One full AUI-Gym round at model speed: 52 apps × 30 tasks, every role through the latency server.

    .venv/bin/python bench/aui_gym_round.py [--apps 52] [--tasks 30] [--concurrency 32] [--out DIR]
                                            [--database postgres|sqlite]

The 52 AUI-Gym prompts (`../shared/data/aui-gym-apps`, read by path). A model coder needs a page
to hand back: an app's v0 is its GPT-5 app (`../shared/data/gpt5-apps/<id>`) where there is one,
else a bundled or GPT-5 app reused in turn (the output lists which id got which page). Every role
is a `LatencyOpenAIServer` in its own process playing `flows.testing.LatencyRoles`: the coder
(≈ 30 s, log-normal) returns the page, the proposer (≈ 10 s) 30 tasks for it — the page's known
tasks with their proven checkers, then tasks made from its controls — the verifier (≈ 10 s) their
checkers and solutions, UI-TARS (1 s a step, fixed) plays each solution at the elements' points,
the commenter (≈ 5 s) a valid comment per failed rollout.

One integrated round: v0 → propose → verify (every checker proven in Chromium) → 1,560 rollouts →
comment → revise (v1). The sweep runs with `rounds: 1` (the loop ends with round 1 judged);
`round_wall_s` is the time until the last v1 was written, `total_wall_s` the whole sweep. Then the
same sweep again: it must resume from Prefect's cache with zero model calls.

The sweep reports to a Prefect server of its own on a fresh PostgreSQL cluster (`--database postgres`,
the default where PostgreSQL is installed): on SQLite (`--database sqlite`, Prefect's ephemeral server)
the cached re-run's 52 app flows, finishing their stages at once, met "503 Service Unavailable"
(database is locked) past the client's 8 retries (2026-11-28). The cache is in the result storage
(`$PREFECT_HOME/storage`), not in the database, so `--rerun` works on a new server.

Figures: wall times, rollouts per minute, Prefect task runs, the fixed cost of a Prefect task run
on this server (measured after the sweep on 200 persisted no-op tasks) and what it adds up to,
the database's size, peak RSS / PSS of this process tree, and the projection for the paper's
grid (3 coders × 3 modes × 2 rounds = 18 such rounds) on this machine and on K machines (tracks
are independent; the model endpoints are assumed to keep up). Target: one round ≤ 20 min (issue 28's lean engine;
issue 19 had asked ≤ 25).
Last line: one JSON object with rollouts, round_wall_s, rerun_model_calls, peak_rss_mb.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlsplit

import yaml

from apps_prompts import BUNDLED_DIR, load_apps, load_tasks_file, reference_html_path
from cua import close_browser
from experiment import make_config
from flows import sweep
from flows.testing import (
    LATENCY_ROLES,
    LatencyRoles,
    plan_apps,
    postgres_database,
    postgres_installed,
    prefect_server,
    role_latencies,
    write_latency_models,
)
from llm.testing import LatencyOpenAIServer

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data"
GRID_ROUNDS = 3 * 3 * 2


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def serve(roles, latencies, port_queue, calls, stop, port=0) -> None:
    """The model server's process: answers until `stop` is set, counting requests in `calls` (shared)."""
    def answer(request):
        with calls.get_lock():
            calls.value += 1
        return roles(request)

    with LatencyOpenAIServer(answer, latencies, seed=19, port=port) as server:
        port_queue.put(server.port)
        stop.wait()


def first_versions(ids: list[str]) -> tuple[dict[str, tuple[str, list]], dict[str, str]]:
    """Per AUI-Gym id: (v0 HTML, the known tasks of that page) and where the page came from."""
    gpt5_dir = SHARED / "gpt5-apps"
    tasks_file = ROOT / "configs" / "gpt5-tasks.yaml"
    pages: dict[str, tuple[str, list]] = {}
    for path in sorted(gpt5_dir.glob("*/index.html")):
        pages[f"gpt5:{path.parent.name}"] = (path.read_text(encoding="utf-8"), load_tasks_file(tasks_file, path.parent.name))
    for spec in load_apps(BUNDLED_DIR).apps:
        pages[f"bundled:{spec.id}"] = (Path(reference_html_path(spec)).read_text(encoding="utf-8"), list(spec.tasks))
    pool = sorted(pages)
    chosen, source = {}, {}
    spare = iter(pool * (len(ids) // max(len(pool), 1) + 1))
    for app_id in ids:
        key = f"gpt5:{app_id}" if f"gpt5:{app_id}" in pages else next(spare)
        chosen[app_id], source[app_id] = pages[key], key
    return chosen, source


async def task_run_cost_s(count: int = 200) -> float:
    """Seconds one persisted, cached Prefect task run costs on this server beyond its work (a no-op)."""
    import uuid

    from prefect import flow, task
    from prefect.cache_policies import INPUTS

    @task(cache_policy=INPUTS, persist_result=True)
    async def nothing(key: str, number: int) -> int:
        return number

    @flow(name="task-run-cost")
    async def many(key: str, count: int) -> float:
        started = time.perf_counter()
        for number in range(count):
            await nothing(key, number)
        return (time.perf_counter() - started) / count

    return await many(uuid.uuid4().hex, count)


async def main(args: argparse.Namespace) -> dict:

    sys.path.insert(0, str(Path(__file__).parent))
    from scale import TreeSampler, cores_between  # noqa: E402  (the same process-tree sampler)

    out = Path(args.out or tempfile.mkdtemp(prefix="aui-bench-round-")).resolve()
    out.mkdir(parents=True, exist_ok=True)
    apps_dir = SHARED / "aui-gym-apps"
    specs = load_apps(apps_dir).raise_for_errors()[: args.apps]
    ids = [spec.id for spec in specs]
    pages, source = first_versions(ids)
    reused = {app_id: key for app_id, key in source.items() if not key.startswith(f"gpt5:{app_id}")}
    log(f"{len(ids)} apps; v0 from its own GPT-5 app for {len(ids) - len(reused)}, reused from another app for "
        f"{len(reused)}: {', '.join(f'{a}←{k}' for a, k in list(reused.items())[:6])}, …")
    planned = time.perf_counter()
    plans = await plan_apps(pages, count=args.tasks)
    plan_s = time.perf_counter() - planned
    roles = LatencyRoles(plans, {spec.id: spec.prompt_text() for spec in specs})

    context = multiprocessing.get_context("spawn")
    port_queue, calls, stop = context.Queue(), context.Value("i", 0), context.Event()
    # --rerun: the model server on the port the earlier run's models.yaml names, so that every stage's
    # inputs are the same and Prefect's cache answers them
    port = urlsplit(yaml.safe_load((out / "models.yaml").read_text())["models"][0]["base_url"]).port if args.rerun else 0
    server = context.Process(target=serve, args=(roles, role_latencies(), port_queue, calls, stop, port), daemon=True)
    server.start()
    port = port_queue.get(timeout=120)

    class Where:
        base_url = f"http://127.0.0.1:{port}/v1"

    models = write_latency_models(Where, out / "models.yaml", timeout_s=300,
                                  max_concurrency={"cua": args.concurrency})
    config = make_config({"name": "aui-gym-round", "apps": str(apps_dir), "app_ids": ids, "rounds": 1, **LATENCY_ROLES,
                          "revision_modes": ["integrated"], "tasks_per_app": args.tasks, "concurrency": args.concurrency,
                          "out_dir": str(out / "runs"), "models_config": str(models), "max_rollouts": 100_000})
    os.environ["AUI_LLM_CACHE"] = "off"  # only Prefect's cache may make the re-run free
    result: dict = {"database": args.database, "apps": len(ids), "tasks_per_app": args.tasks, "concurrency": args.concurrency,
                    "v0_reused_from": reused, "plan_s": round(plan_s, 1), "cpus": os.cpu_count(),
                    "load_average_at_start": round(os.getloadavg()[0], 2)}
    try:
        if args.rerun:
            return await _rerun_only(config, calls, result)
        with TreeSampler({server.pid}, interval_s=2.0) as sampler:
            started, cpu_before = time.time(), sampler.cpu_by_kind()
            results = await sweep(config)
            total = time.time() - started
            cpu_after = sampler.cpu_by_kind()
        revised = [p.stat().st_mtime for p in config.run_dir.glob("apps/**/round-1/revision.json")]
        round_wall = (max(revised) - started) if revised else None
        round0 = [r for r in results if r.round == 0]
        rollouts = sum(1 for r in round0 for t in r.tasks if t.trajectory)
        result.update(
            rollouts=rollouts, rollouts_all_rounds=sum(1 for r in results for t in r.tasks if t.trajectory),
            round_wall_s=round(round_wall, 1) if round_wall else None, total_wall_s=round(total, 1),
            rollouts_per_min=round(rollouts / (round_wall / 60), 1) if round_wall else None,
            fc_proven=round(sum(t.proof == "proven" for r in round0 for t in r.tasks) / max(1, sum(len(r.tasks) for r in round0)), 3),
            sr_round0=round(sum(t.success for r in round0 for t in r.tasks) / max(1, sum(len(r.tasks) for r in round0)), 3),
            errors=sum(len(r.errors) for r in results), peak_rss_mb=round(sampler.peak_mb, 1),
            peak_pss_mb=round(sampler.peak_pss_mb, 1),
            cores_busy_by_process=cores_between(cpu_before, cpu_after, total),
            chromium=json.loads((config.run_dir / "manifest.json").read_text(encoding="utf-8"))["browser"]["binary"])
        log(f"round: {json.dumps({k: result[k] for k in ('rollouts', 'round_wall_s', 'total_wall_s', 'peak_rss_mb')})}")

        result["model_calls"] = calls.value
        log("the same sweep again (must make no model calls) …")
        before = calls.value
        started = time.time()
        await sweep(config)
        result["rerun_wall_s"] = round(time.time() - started, 1)
        result["rerun_model_calls"] = calls.value - before
        per_run = await task_run_cost_s()
        result["prefect_s_per_task_run"] = round(per_run, 4)
        result["database_mb"] = await _database_mb(args.database_url)
        result["prefect_task_runs"] = await _task_runs()
        if result["prefect_task_runs"]:
            result["prefect_overhead_s_serial"] = round(per_run * result["prefect_task_runs"], 1)
        if round_wall:
            result["projection_grid_s"] = {f"K={k}": round(GRID_ROUNDS * round_wall / k) for k in (1, 2, 4, 8)}
    finally:
        await close_browser()
        stop.set()
        server.join(timeout=10)
    result["out"] = str(out)
    return result


async def _rerun_only(config, calls, result: dict) -> dict:
    """`--rerun`: the same sweep again over an earlier run's folder (its models.yaml, its Prefect cache)."""
    log("the same sweep again over the earlier run (must make no model calls) …")
    started = time.time()
    results = await sweep(config)
    result.update(rerun_wall_s=round(time.time() - started, 1), rerun_model_calls=calls.value,
                  rollouts=sum(1 for r in results if r.round == 0 for t in r.tasks if t.trajectory),
                  errors=sum(len(r.errors) for r in results))
    return result


async def _task_runs() -> int:
    """Task runs of the sweep's flows (the sweep and its app flows, both runs of it) on the server."""
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import FlowFilter, FlowFilterName

    flows = FlowFilter(name=FlowFilterName(any_=["aui-sweep", "design-loop"]))
    count = 0
    async with get_client() as client:  # read in pages: the client has no count of task runs
        while page := await client.read_task_runs(flow_filter=flows, offset=count, limit=200):
            count += len(page)
    return count


async def _database_mb(url: str | None) -> float | None:
    """The server's database size: the ephemeral server's SQLite file, or the PostgreSQL database at `url`."""
    if url is None:
        database = Path(os.environ.get("PREFECT_HOME", ROOT / ".prefect")) / "prefect.db"
        return round(database.stat().st_size / 2**20, 1) if database.exists() else None
    import asyncpg

    connection = await asyncpg.connect(url.replace("postgresql+asyncpg://", "postgresql://"))
    try:
        return round(await connection.fetchval("SELECT pg_database_size(current_database())") / 2**20, 1)
    finally:
        await connection.close()


def run_on_server(args: argparse.Namespace) -> dict:
    """`main` reporting to the server `--database` asks for: Prefect's ephemeral SQLite server, or a server of
    its own on a fresh PostgreSQL cluster (both stopped at the end)."""
    if args.database == "sqlite":
        args.database_url = None
        return asyncio.run(main(args))
    from prefect.settings import PREFECT_API_URL, temporary_settings

    folder = Path(tempfile.mkdtemp(prefix="aui-bench-server-"))
    with postgres_database() as url, prefect_server(folder, {"PREFECT_API_DATABASE_CONNECTION_URL": url}) as (base, _):
        log(f"Prefect server on PostgreSQL: {base}")
        args.database_url = url
        with temporary_settings(updates={PREFECT_API_URL: f"{base}/api"}):
            result = asyncio.run(main(args))
    shutil.rmtree(folder, ignore_errors=True)
    return result


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--apps", type=int, default=52, help="The first N AUI-Gym apps (52: all).")
    parser.add_argument("--tasks", type=int, default=30, help="Tasks per app.")
    parser.add_argument("--rerun", action="store_true",
                        help="Only the re-run, over the earlier run in --out (same arguments): it must make no model calls.")
    parser.add_argument("--concurrency", type=int, default=32, help="Rollouts in flight (and the CUA's max_concurrency).")
    parser.add_argument("--out", help="Keep the run here (default: a temp folder).")
    parser.add_argument("--database", choices=["postgres", "sqlite"], default="postgres" if postgres_installed() else "sqlite",
                        help="The Prefect server's database: a PostgreSQL cluster of the bench's own (the default where "
                        "PostgreSQL is installed), or the ephemeral server's SQLite.")
    print(json.dumps(run_on_server(parser.parse_args())))
