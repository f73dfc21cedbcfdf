"""Benchmark of the CUA engine; prints one JSON object as its last line.

    .venv/bin/python bench/rollout.py [--steps 30] [--skip-heuristic] [--out DIR]

- floor_ms_per_step: median of the raw Playwright floor (mouse click at a point + screenshot +
  one evaluate), measured in this run on the same page.
- engine_ms_per_step: median step time of our rollout driving the same click through a
  zero-latency scripted policy (probe, click, settle, screenshot, change detection, checker,
  PNG + atomic JSON write).
- overhead_ratio = engine / floor.
- settle_ms_median_still: median settle time of those engine steps (each click changes the DOM;
  nothing scrolls or moves).
- settle_ms_median_motion: median settle time of steps whose click starts a smooth scroll
  (`scrollIntoView({behavior: 'smooth'})` under `scroll-behavior: smooth`) and a 600 ms CSS
  transition; motion_ms_median_motion: of that, until the page last moved.
- steps_per_s_1 / steps_per_s_2: throughput of whole rollouts (context, load, steps) with 1 and
  2 at a time (4 and 8 rollouts of 20 steps), zero-latency policy; *_model200 variants add a
  simulated 200 ms model call.
- cores_busy_1 / cores_busy_2: CPU seconds of this process tree (Python, the Playwright driver,
  Chromium's browser, GPU and renderer processes) per wall second during those runs;
  throughput_gain_ceiling = cpus / cores_busy_1, the most a second concurrent rollout can add
  when one rollout alone already keeps that many cores busy.
- mb_per_extra_rollout: proportional memory (PSS) of this process tree per extra open rollout.
- heuristic_sr_bundled: the heuristic policy's success rate over all bundled tasks on their
  reference apps (null, with a reason, if the heuristic or the bundled apps are missing).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from contextlib import AsyncExitStack
from pathlib import Path

from apps_prompts import BUNDLED_DIR, load_apps, reference_html_path
from cua import (
    Action,
    Observation,
    Point,
    Policy,
    PolicyDecision,
    RolloutConfig,
    RolloutJob,
    close_browser,
    open_app,
    rollout,
    run_rollouts,
    settle,
)
from cua.policies import get_policy
from verifier import rollout_checker, run_checker

TARGETS = {"overhead_ratio": 1.5, "engine_ms_per_step": 350, "throughput_gain": 1.4, "mb_per_extra_rollout": 120}

PAGE = """<!doctype html><html><head><style>
 body { margin: 0; font: 15px sans-serif; background: #f6f7fb; }
 header { background: #234; color: #fff; padding: 14px 24px; font-size: 20px; }
 main { display: grid; grid-template-columns: 320px 1fr; gap: 24px; padding: 24px; }
 .card { background: #fff; border-radius: 8px; padding: 16px; box-shadow: 0 1px 3px #0002; }
 #add { position: absolute; left: 40px; top: 90px; width: 160px; height: 44px; font-size: 16px; }
 li { padding: 4px 0; border-bottom: 1px solid #eee; }
</style></head><body>
<header>Bench Tasks</header>
<button id="add">Add task</button>
<main><div class="card" style="margin-top:70px">Tasks: <b id="count">0</b></div>
<div class="card"><ul id="list"></ul></div></main>
<script>
 let n = 0;
 document.getElementById('add').onclick = () => {
   n += 1; document.getElementById('count').textContent = String(n);
   const li = document.createElement('li'); li.textContent = 'Task number ' + n;
   const list = document.getElementById('list'); list.prepend(li);
   while (list.children.length > 12) list.lastChild.remove();
 };
</script></body></html>"""
ADD = (120, 112)
CHECKER = "return Number(document.querySelector('#count').textContent) >= 100000;"

# Every click on the fixed button smooth-scrolls to the other end of the page and slides a bar (600 ms).
MOTION_PAGE = """<!doctype html><html><head><style>
 html { scroll-behavior: smooth; } body { margin: 0; font: 15px sans-serif; }
 #top { height: 900px; background: #eef; } #bottom { height: 900px; background: #efe; }
 #toggle { position: fixed; left: 40px; top: 40px; width: 160px; height: 44px; }
 #bar { position: fixed; left: 40px; top: 300px; width: 200px; height: 40px; background: #36c; transition: left 600ms ease; }
 #bar.right { left: 900px; }
</style></head><body><button id="toggle">Go</button><div id="bar"></div>
<section id="top">Top</section><section id="bottom">Bottom</section>
<script>
 let down = false;
 document.getElementById('toggle').onclick = () => {
   down = !down;
   document.getElementById(down ? 'bottom' : 'top').scrollIntoView({behavior: 'smooth'});
   document.getElementById('bar').classList.toggle('right', down);
 };
</script></body></html>"""
TOGGLE = (120, 62)


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


async def floor_ms_per_step(steps: int) -> float:
    async with open_app(PAGE) as app:
        page = app.page
        await settle(page)
        times = []
        for _ in range(steps + 3):
            started = time.perf_counter()
            await page.mouse.click(*ADD)
            await page.screenshot()
            await page.evaluate("Number(document.querySelector('#count').textContent)")
            times.append((time.perf_counter() - started) * 1000)
        return statistics.median(times[3:])  # the first few warm up the renderer


async def run_checker_js(page) -> bool:
    return (await run_checker(page, CHECKER)).passed


def click_policy(steps: int) -> Policy:
    return get_policy("scripted", script=[Action(kind="click", point=Point(x=ADD[0], y=ADD[1]))] * steps)


class _SlowClicks(Policy):
    """Stands in for a model that answers in `latency_s` (a real model is slower still)."""

    name = "simulated-model"

    def __init__(self, latency_s: float):
        self.latency_s = latency_s

    @property
    def coordinate_space(self) -> str:
        return "screen"

    async def act(self, observation: Observation) -> PolicyDecision:
        await asyncio.sleep(self.latency_s)
        return PolicyDecision(actions=[Action(kind="click", point=Point(x=ADD[0], y=ADD[1]))])


def bench_config(steps: int) -> RolloutConfig:
    # The bench page changes on every click by design: only max_steps should end these rollouts.
    return RolloutConfig(max_steps=steps, stuck_no_change_steps=0, stuck_repeat_steps=0)


async def engine_ms_per_step(steps: int, out: Path) -> tuple[float, dict[str, float]]:
    await rollout(PAGE, "warm up", click_policy(3), run_checker_js, out / "warmup", bench_config(3))
    trajectory = await rollout(PAGE, "Add tasks", click_policy(steps + 3), run_checker_js, out / "engine", bench_config(steps + 3))
    measured = trajectory.steps[3:]
    parts = {
        name: round(statistics.median(getattr(s.timings, name) for s in measured), 2)
        for name in ("execute_ms", "settle_ms", "screenshot_ms", "checker_ms", "write_ms")
    }
    return statistics.median(s.timings.total_ms for s in measured), parts


async def settle_with_motion(steps: int, out: Path) -> tuple[float, float | None]:
    """(median settle ms, median ms until the last motion) of clicks that each start a smooth scroll and a 600 ms slide."""
    policy = get_policy("scripted", script=[Action(kind="click", point=Point(x=TOGGLE[0], y=TOGGLE[1]))] * (steps + 1))
    trajectory = await rollout(MOTION_PAGE, "Toggle", policy, run_checker_js, out / "motion", bench_config(steps + 1))
    measured = trajectory.steps[1:]  # the first warms up the renderer
    motion = [getattr(s.timings, "motion_ms", None) for s in measured]
    return (statistics.median(s.timings.settle_ms for s in measured),
            statistics.median(motion) if None not in motion else None)


async def steps_per_second(concurrency: int, rollouts: int, steps: int, out: Path, latency_s: float = 0.0) -> tuple[float, float]:
    """(steps per second, CPU cores kept busy on average) over `rollouts` whole rollouts."""
    jobs = [
        RolloutJob(PAGE, "Add tasks", _SlowClicks(latency_s) if latency_s else click_policy(steps), run_checker_js,
                   out / f"c{concurrency}-{latency_s}-{i}")
        for i in range(rollouts)
    ]
    cpu_started, started = _tree_cpu_s(os.getpid()), time.perf_counter()
    trajectories = await run_rollouts(jobs, bench_config(steps), concurrency=concurrency)
    elapsed = time.perf_counter() - started
    cores_busy = (_tree_cpu_s(os.getpid()) - cpu_started) / elapsed
    return sum(len(t.steps) for t in trajectories) / elapsed, cores_busy


def _tree(root: int) -> list[int]:
    """`root` and every process below it (the Playwright driver, Chromium and its children)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as handle:
                    parent = int(handle.read().rsplit(")", 1)[1].split()[1])
                children.setdefault(parent, []).append(int(entry))
            except (OSError, IndexError, ValueError):
                continue
    found, stack = [], [root]
    while stack:
        pid = stack.pop()
        found.append(pid)
        stack.extend(children.get(pid, []))
    return found


def _tree_pss_kb(root: int) -> int:
    total = 0
    for pid in _tree(root):
        try:
            with open(f"/proc/{pid}/smaps_rollup") as handle:
                total += next(int(line.split()[1]) for line in handle if line.startswith("Pss:"))
        except (OSError, StopIteration, ValueError):
            continue
    return total


def _tree_cpu_s(root: int) -> float:
    """CPU seconds used so far by the tree, including its exited children (a closed page's renderer)."""
    ticks = 0
    for pid in _tree(root):
        try:
            with open(f"/proc/{pid}/stat") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
            ticks += sum(int(value) for value in fields[11:15])  # utime stime cutime cstime
        except (OSError, ValueError):
            continue
    return ticks / os.sysconf("SC_CLK_TCK")


async def mb_per_extra_rollout(extra: int = 3) -> float:
    async def open_rollouts(count: int, stack: AsyncExitStack) -> None:
        for _ in range(count):
            app = await stack.enter_async_context(open_app(PAGE))
            await app.page.mouse.click(*ADD)
            await app.page.screenshot()

    samples = {}
    for count in (1, 1 + extra):
        async with AsyncExitStack() as stack:
            await open_rollouts(count, stack)
            samples[count] = _tree_pss_kb(os.getpid())
    return (samples[1 + extra] - samples[1]) / extra / 1024


async def heuristic_sr_bundled(out: Path, max_steps: int, concurrency: int) -> dict:
    try:
        get_policy("heuristic")
    except Exception as exc:
        return {"heuristic_sr_bundled": None, "heuristic_note": f"heuristic policy unavailable: {type(exc).__name__}: {exc}"}
    loaded = load_apps(BUNDLED_DIR) if BUNDLED_DIR.is_dir() else None
    if not loaded or not loaded.apps:
        return {"heuristic_sr_bundled": None, "heuristic_note": f"no bundled apps in {BUNDLED_DIR}"}

    jobs, total = [], 0
    for spec in loaded.apps:
        html_path = reference_html_path(spec)
        for task in spec.tasks:
            total += 1
            if not task.checker or html_path is None:
                continue  # counts as a failure, as in the paper
            jobs.append(RolloutJob(Path(html_path).read_text(encoding="utf-8"), task.description, get_policy("heuristic"),
                                   rollout_checker(task.checker), out / "heuristic" / spec.id / task.id, app_id=spec.id, task_id=task.id,
                                   expected_outcome=task.expected_outcome))
    config = RolloutConfig(max_steps=max_steps, episode_timeout_s=120)
    trajectories = await run_rollouts(jobs, config, concurrency=concurrency)
    solved = sorted(f"{t.app_id}/{t.task_id}" for t in trajectories if t.success)
    reasons: dict[str, int] = {}
    for t in trajectories:
        key = t.termination.value if t.termination else "none"
        reasons[key] = reasons.get(key, 0) + 1
    return {
        "heuristic_sr_bundled": round(len(solved) / total, 4) if total else None,
        "heuristic_tasks": total,
        "heuristic_solved": len(solved),
        "heuristic_terminations": reasons,
        "heuristic_apps": len(loaded.apps),
    }


async def main(args: argparse.Namespace) -> dict:
    out = Path(args.out or tempfile.mkdtemp(prefix="aui-bench-rollout-"))
    result: dict = {"load_average_at_start": round(os.getloadavg()[0], 2), "cpus": os.cpu_count()}
    try:
        log("floor …")
        floor = await floor_ms_per_step(args.steps)
        log("engine …")
        engine, parts = await engine_ms_per_step(args.steps, out)
        result.update(floor_ms_per_step=round(floor, 2), engine_ms_per_step=round(engine, 2),
                      overhead_ratio=round(engine / floor, 3), engine_parts_ms=parts,
                      settle_ms_median_still=parts["settle_ms"])
        log("settle with motion …")
        settle_motion, motion = await settle_with_motion(args.motion_steps, out)
        result.update(settle_ms_median_motion=round(settle_motion, 2),
                      motion_ms_median_motion=None if motion is None else round(motion, 2))
        log("throughput …")
        (one, busy_one), (two, busy_two) = await steps_per_second(1, 4, 20, out), await steps_per_second(2, 8, 20, out)
        (one_model, _), (two_model, _) = await steps_per_second(1, 2, 10, out, 0.2), await steps_per_second(2, 4, 10, out, 0.2)
        result.update(steps_per_s_1=round(one, 2), steps_per_s_2=round(two, 2),
                      cores_busy_1=round(busy_one, 2), cores_busy_2=round(busy_two, 2),
                      throughput_gain_ceiling=round(result["cpus"] / busy_one, 2),
                      steps_per_s_1_model200=round(one_model, 2), steps_per_s_2_model200=round(two_model, 2))
        log("memory …")
        result["mb_per_extra_rollout"] = round(await mb_per_extra_rollout(), 1)
        if args.skip_heuristic:
            result.update(heuristic_sr_bundled=None, heuristic_note="skipped (--skip-heuristic)")
        else:
            log("heuristic over bundled tasks …")
            result.update(await heuristic_sr_bundled(out, args.max_steps, args.concurrency))
    finally:
        await close_browser()
    result["targets_met"] = {
        "overhead_ratio": result["overhead_ratio"] <= TARGETS["overhead_ratio"],
        "engine_ms_per_step": result["engine_ms_per_step"] <= TARGETS["engine_ms_per_step"],
        "steps_per_s_2": result["steps_per_s_2"] >= TARGETS["throughput_gain"] * result["steps_per_s_1"],
        "mb_per_extra_rollout": result["mb_per_extra_rollout"] <= TARGETS["mb_per_extra_rollout"],
    }
    result["out"] = str(out)
    return result


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=30, help="Measured steps for floor and engine medians.")
    parser.add_argument("--motion-steps", type=int, default=10, help="Measured steps of the smooth-scroll page.")
    parser.add_argument("--max-steps", type=int, default=20, help="Step limit for the heuristic rollouts.")
    parser.add_argument("--concurrency", type=int, default=2, help="Concurrent heuristic rollouts.")
    parser.add_argument("--skip-heuristic", action="store_true")
    parser.add_argument("--out", help="Keep the trajectories here (default: a temp folder).")
    print(json.dumps(asyncio.run(main(parser.parse_args()))))
