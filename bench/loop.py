"""Benchmark of the design loop on Prefect; prints one JSON object as its last line.

    .venv/bin/python bench/loop.py [--apps a,b] [--rounds 1] [--max-steps 20] [--concurrency 2] [--repeat 2]
                                   [--skip-online] [--out DIR]

The offline sweep (heuristic agent; offline coder, proposer, verifier and commenter; integrated
revision; all bundled apps unless --apps) is run three ways in this one process, after a warm-up
(Prefect's server, the browser, imports) that is not timed:

- direct_runs_s: the same stages' plain functions (`sweep_without_prefect`), no Prefect at all;
- first_run_s: the Prefect flows (`sweep`) on a new run folder (nothing cached);
- rerun_s: the same `sweep` again on the same run folder (every stage from Prefect's cache).

The order is direct, flow (+ re-run), flow, direct (`--repeat 2`, the default): the load of a
shared machine drifts, and prefect_overhead_ratio = sum(flow runs) / sum(direct runs) cancels a
linear drift. sr_round0 / sr_round1: overall SR of the first flow run per round (pooled over
tasks). Offline roles make no model calls by construction (`offline_*_model_calls` count them
anyway, with `llm.call_stats()`); the online variant runs one app through every role against a
local scripted OpenAI-protocol server (`flows.testing`) and counts the requests it receives on
the re-run. `rerun_model_calls` sums both re-runs. The machine is shared: wall times vary from
run to run; the load average is recorded at the start and the end.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from pathlib import Path

from apps_prompts import load_apps
from cua import close_browser, get_browser
from experiment import make_config
from flows import sweep, sweep_without_prefect  # first: importing `flows` sets Prefect's environment
from flows.testing import ONLINE_ROLES, ScriptedRoles, click_point
from llm import call_stats
from llm.testing import ScriptedOpenAIServer
from results import table_rows

TARGETS = {"rerun_model_calls": 0, "rerun_vs_first": 0.2, "prefect_overhead_ratio": 1.25}
ONLINE_APP = "unit-converter"


def log(message: str) -> None:
    print(f"[bench/loop] {message}", file=sys.stderr, flush=True)


def offline_config(name: str, out: Path, args: argparse.Namespace, app_ids: list[str], **overrides):
    return make_config({
        "name": name, "app_ids": app_ids, "rounds": args.rounds, "revision_modes": ["integrated"],
        "max_steps": args.max_steps, "concurrency": args.concurrency, "out_dir": str(out), **overrides,
    })


def sr_by_round(results) -> dict[int, float | None]:
    return {row.round: row.sr["overall"] for row in table_rows(results)}


async def warm_up(out: Path, args: argparse.Namespace) -> float:
    """Start Prefect's server and the browser, import what the stages import; returns Prefect's start-up time."""
    # Here, not at the top: importing what the stages import is part of the warm-up, outside the timings.
    import matplotlib.pyplot  # noqa: F401
    from prefect.client.orchestration import get_client

    import cua.policies  # noqa: F401
    import dashboard_render  # noqa: F401

    started = time.perf_counter()
    async with get_client() as client:
        await client.hello()
    prefect_start_s = time.perf_counter() - started
    await get_browser()
    tiny = argparse.Namespace(**{**vars(args), "rounds": 0, "max_steps": 1})
    await sweep_without_prefect(offline_config("warm-up", out, tiny, [ONLINE_APP]))
    return prefect_start_s


async def online_variant(out: Path) -> dict:
    """One app, every role scripted: model requests of the first run and of the re-run."""
    roles = ScriptedRoles(ONLINE_APP, ["swap-to-feet-metres", "miles-to-km"],
                          clicks={"swap-to-feet-metres": await click_point(ONLINE_APP, "#swap")})
    previous = os.environ.get("AUI_LLM_CACHE")
    os.environ["AUI_LLM_CACHE"] = "off"  # only Prefect's cache may spare the re-run its calls
    try:
        with ScriptedOpenAIServer(roles) as server:
            models = roles.write_models_yaml(server, out / "scripted-models.yaml")
            config = make_config({"name": "online", "app_ids": [ONLINE_APP], "rounds": 1, "revision_modes": ["integrated"],
                                  **ONLINE_ROLES, "tasks_per_app": 3, "max_steps": 3, "out_dir": str(out),
                                  "models_config": str(models)})
            started = time.perf_counter()
            await sweep(config)
            first_s, first_requests = time.perf_counter() - started, len(server.requests)
            started = time.perf_counter()
            await sweep(config)
            rerun_s = time.perf_counter() - started
            return {"online_first_run_s": round(first_s, 2), "online_rerun_s": round(rerun_s, 2),
                    "online_first_model_calls": first_requests,
                    "online_rerun_model_calls": len(server.requests) - first_requests}
    finally:
        if previous is None:
            os.environ.pop("AUI_LLM_CACHE", None)
        else:
            os.environ["AUI_LLM_CACHE"] = previous


async def main(args: argparse.Namespace) -> dict:
    out = Path(args.out or tempfile.mkdtemp(prefix="aui-bench-loop-"))
    out.mkdir(parents=True, exist_ok=True)
    all_apps = [spec.id for spec in load_apps().raise_for_errors()]
    app_ids = args.apps.split(",") if args.apps else all_apps
    report: dict = {"apps": app_ids, "all_bundled_apps": app_ids == all_apps, "rounds": args.rounds,
                    "max_steps": args.max_steps, "concurrency": args.concurrency,
                    "load_avg_1m": round(os.getloadavg()[0], 2), "out": str(out)}
    try:
        log(f"warm-up (Prefect server, browser) · load average {report['load_avg_1m']}")
        report["prefect_start_s"] = round(await warm_up(out, args), 2)

        # ABBA: direct, flow, (re-run), flow, direct — the machine's load drifts, and a drift
        # cancels out of the ratio of the sums.
        timings: dict[str, list[float]] = {"direct": [], "flow": []}
        direct, first, again, rerun_s, first_calls, rerun_calls = None, None, None, 0.0, 0, 0
        plan = ["direct", "flow"] + (["flow", "direct"] if args.repeat >= 2 else [])
        for number, kind in enumerate(plan):
            name = f"{kind}-{len(timings[kind]) + 1}"
            config = offline_config(name, out, args, app_ids)
            log(f"{name}: {'the stages without Prefect' if kind == 'direct' else 'the Prefect flows'} · "
                f"{len(app_ids)} apps × {args.rounds + 1} rounds · load average {os.getloadavg()[0]:.1f}")
            calls = call_stats().calls
            started = time.perf_counter()
            results = await (sweep_without_prefect(config) if kind == "direct" else sweep(config))
            timings[kind].append(time.perf_counter() - started)
            if kind == "direct" and direct is None:
                direct = results
            if kind == "flow" and first is None:
                first, first_calls = results, call_stats().calls - calls
                log("re-run of the same sweep (cached)")
                calls = call_stats().calls
                started = time.perf_counter()
                again = await sweep(config)
                rerun_s = time.perf_counter() - started
                rerun_calls = call_stats().calls - calls

        sr, direct_sr = sr_by_round(first), sr_by_round(direct)
        report.update({
            "first_run_s": round(timings["flow"][0], 2),
            "rerun_s": round(rerun_s, 2),
            "flow_runs_s": [round(t, 2) for t in timings["flow"]],
            "direct_runs_s": [round(t, 2) for t in timings["direct"]],
            "prefect_overhead_ratio": round(sum(timings["flow"]) / sum(timings["direct"]), 3),
            "offline_first_model_calls": first_calls,
            "offline_rerun_model_calls": rerun_calls,
            "rerun_results_identical": [r.model_dump() for r in again] == [r.model_dump() for r in first],
            "sr_round0": sr.get(0),
            "sr_round1": sr.get(1),
            "direct_sr_round0": direct_sr.get(0),
            "direct_sr_round1": direct_sr.get(1),
            "rollouts_per_run": sum(1 for r in first for t in r.tasks if t.trajectory),
            "load_avg_1m_end": round(os.getloadavg()[0], 2),
        })
        if not args.skip_online:
            log("online variant: every role against a scripted OpenAI-protocol server")
            report.update(await online_variant(out))
        report["rerun_model_calls"] = rerun_calls + report.get("online_rerun_model_calls", 0)
    finally:
        await close_browser()
    report["targets"] = TARGETS
    report["met"] = {
        "rerun_model_calls": report["rerun_model_calls"] == 0,
        "rerun_vs_first": report["rerun_s"] <= TARGETS["rerun_vs_first"] * report["first_run_s"],
        "prefect_overhead_ratio": report["prefect_overhead_ratio"] <= TARGETS["prefect_overhead_ratio"],
        "sr_round1_gt_round0": (report["sr_round1"] or 0) > (report["sr_round0"] or 0),
    }
    return report


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--apps", help="Comma-separated bundled app ids (default: all bundled apps).")
    parser.add_argument("--rounds", type=int, default=1, help="Revision rounds after v0 (default 1: rounds 0 and 1).")
    parser.add_argument("--max-steps", type=int, default=20, help="Step limit per rollout (the paper's 20).")
    parser.add_argument("--concurrency", type=int, default=2, help="Rollouts in flight.")
    parser.add_argument("--repeat", type=int, default=2, choices=(1, 2),
                        help="2: direct, flow, flow, direct (drift-cancelling, default); 1: direct, flow.")
    parser.add_argument("--skip-online", action="store_true", help="Skip the scripted-server online variant.")
    parser.add_argument("--out", help="Keep the run folders here (default: a temp folder).")
    print(json.dumps(asyncio.run(main(parser.parse_args()))))
