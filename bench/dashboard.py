"""Benchmark the dashboard: render time, legibility of crops, visual-token reductions.

    .venv/bin/python bench/dashboard.py [--tasks-per-app 3] [--max-steps 20] [--fresh]

Trajectories come from heuristic-policy rollouts (offline, real Chromium) on the bundled apps
(their tasks and reference checkers) and on ../shared/data/gpt5-apps (tasks made from the
features in the matching AUI-Gym prompt; no checker, so those run until the agent stops).
Prints a few lines of context, then one JSON object as the last line:

    render_ms_20_steps   median wall time of render_trajectory on a 20-step trajectory (load + draw + PNG)
    render_cpu_ms_20_steps  the same in CPU time of all threads (robust to a busy machine), and load_avg_1m
    min_crop_scale_12/20 smallest on-canvas scale of an acted-on region over dashboards of ≤ 12 / ≤ 20 steps
    token_reduction_*    mean per-trajectory reduction of visual tokens, raw screenshots → dashboard
    n_trajectories       real rollout trajectories measured

The 12- and 20-step figures also cover trajectories composed from real steps (so the boundary
cases are measured even when no rollout had exactly that many steps).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import shutil
import statistics
import sys
import time
from pathlib import Path

from apps_prompts import BUNDLED_DIR, load_apps, reference_html_path
from cua import TRAJECTORY_FILE, RolloutConfig, Trajectory, close_browser, rollout
from cua.policies import get_policy
from dashboard_render import account_trajectory, plan_dashboard, render_trajectory, summarize
from verifier import rollout_checker

ROOT = Path(__file__).resolve().parents[1]
GPT5_APPS = ROOT.parent / "shared" / "data" / "gpt5-apps"
AUI_GYM_APPS = ROOT.parent / "shared" / "data" / "aui-gym-apps"


def gpt5_tasks(app_id: str, limit: int) -> list[tuple[str, str]]:
    """(task id, task text) from the feature bullets ("- Features: a, b", "- Inputs: x, y") of the
    matching AUI-Gym prompt; these apps ship without tasks, and the offline proposer invents none."""
    import yaml

    prompt_file = AUI_GYM_APPS / f"{app_id}.yaml"
    prompt = yaml.safe_load(prompt_file.read_text(encoding="utf-8")).get("prompt", "") if prompt_file.is_file() else ""
    bullets = [line.strip()[2:].strip() for line in prompt.splitlines() if line.strip().startswith("- ")]
    tasks: list[str] = []
    for bullet in bullets:
        key, _, value = bullet.partition(":")
        if value.strip() and key.strip().lower() not in ("name", "goal"):
            tasks += [f"Use the {item.strip(' .')} feature." for item in re.split(r"[,;]", value) if item.strip(" .")]
    if not tasks:  # prompts written as plain sentences: each bullet is something a user does
        tasks = [bullet.split(";")[0].rstrip(".") + "." for bullet in bullets]
    if not tasks:
        return [("explore", "Use the app's main feature.")]
    return [(f"feature-{i + 1}", text) for i, text in enumerate(tasks[:limit])]


async def run_rollouts(out: Path, tasks_per_app: int, max_steps: int, reuse: bool) -> list[Path]:
    jobs = []  # (folder, html, task text, checker source or None, app id, task id, expected)
    for spec in load_apps(BUNDLED_DIR).apps:
        path = reference_html_path(spec)
        if path is None or not path.is_file():
            continue
        html = path.read_text(encoding="utf-8")
        for task in spec.tasks[:tasks_per_app]:
            jobs.append((out / "bundled" / spec.id / task.id, html, task.description, task.checker, spec.id, task.id,
                         task.expected_outcome))
    if GPT5_APPS.is_dir():
        for app_dir in sorted(p for p in GPT5_APPS.iterdir() if (p / "index.html").is_file()):
            html = (app_dir / "index.html").read_text(encoding="utf-8")
            for task_id, text in gpt5_tasks(app_dir.name, max(1, tasks_per_app - 1)):
                jobs.append((out / "gpt5" / app_dir.name / task_id, html, text, None, app_dir.name, task_id, ""))
    else:
        print(f"note: {GPT5_APPS} not found; bundled apps only", file=sys.stderr)

    config = RolloutConfig(max_steps=max_steps)
    gate = asyncio.Semaphore(2)  # 2 cores: overlapping page waits helps, more contexts do not

    async def one(job) -> Path | None:
        folder, html, text, source, app_id, task_id, expected = job
        if reuse and (folder / TRAJECTORY_FILE).is_file():
            return folder
        checker = rollout_checker(source)  # the one route the sweep and `aui rollout` take
        async with gate:
            await rollout(html, text, get_policy("heuristic"), checker, folder, config,
                          app_id=app_id, task_id=task_id, expected_outcome=expected)
        return folder

    try:
        started = time.perf_counter()
        folders = [f for f in await asyncio.gather(*(one(job) for job in jobs)) if f is not None]
        print(f"{len(folders)} trajectories ready in {time.perf_counter() - started:.0f} s under {out}", file=sys.stderr)
        return folders
    finally:
        await close_browser()


def compose(sources: list[Path], steps: int, folder: Path) -> Path:
    """A `steps`-step trajectory made of real steps (with their screenshots) from `sources`."""
    folder.mkdir(parents=True, exist_ok=True)
    pool = [(src, step) for src in sources for step in Trajectory.load(src).steps if step.screenshot and step.screen_action]
    if not pool:
        raise RuntimeError("no real steps to compose from")
    first = Trajectory.load(sources[0])
    shutil.copy(sources[0] / first.initial_screenshot, folder / "step_000.png")
    chosen = []
    for index in range(1, steps + 1):
        src, step = pool[(index * 7) % len(pool)]  # spread over apps and action kinds
        name = f"step_{index:03d}.png"
        shutil.copy(src / step.screenshot, folder / name)
        chosen.append(step.model_copy(update={"index": index, "screenshot": name}))
    composed = first.model_copy(update={"steps": chosen, "initial_screenshot": "step_000.png", "task_id": f"composed-{steps}"})
    composed.save(folder)
    return folder


def measure(folders: list[Path], out: Path) -> dict:
    accounts, scales = [], []
    for folder in folders:
        trajectory = Trajectory.load(folder)
        rendered = render_trajectory(trajectory, folder, folder / "dashboard.png")
        accounts.append(account_trajectory(folder))
        scales.append((len(trajectory.steps), rendered.layout.min_action_scale))
    for steps in (12, 20):  # the boundary cases, from real screenshots
        layout = plan_dashboard(Trajectory.load(compose(folders, steps, out / f"composed-{steps}")))
        scales.append((steps, layout.min_action_scale))

    twenty = next((f for f in folders if len(Trajectory.load(f).steps) == 20), None) or out / "composed-20"
    trajectory = Trajectory.load(twenty)
    timings, cpu = [], []
    for _ in range(15):
        started, started_cpu = time.perf_counter(), time.process_time()
        render_trajectory(trajectory, twenty)
        timings.append((time.perf_counter() - started) * 1000)
        cpu.append((time.process_time() - started_cpu) * 1000)

    summary = summarize(accounts)
    step_counts = [n for n, _ in scales[: len(folders)]]
    print(
        f"steps per trajectory: min {min(step_counts)}, median {statistics.median(step_counts)}, max {max(step_counts)}; "
        f"20-step render timed on {twenty.name}; pooled reductions: qwen {summary.pooled_reduction_qwen:.3f}, "
        f"openai {summary.pooled_reduction_openai:.3f} (paper: 0.762 average)",
        file=sys.stderr,
    )
    return {
        "render_ms_20_steps": round(statistics.median(timings), 1),
        # CPU of all threads: what the render costs whatever else the machine is doing.
        "render_cpu_ms_20_steps": round(statistics.median(cpu), 1),
        "load_avg_1m": round(os.getloadavg()[0], 2),
        "min_crop_scale_12": round(min(s for n, s in scales if n <= 12 and s is not None), 3),
        "min_crop_scale_20": round(min(s for n, s in scales if n <= 20 and s is not None), 3),
        "token_reduction_qwen": round(summary.mean_reduction_qwen, 4),
        "token_reduction_openai": round(summary.mean_reduction_openai, 4),
        "n_trajectories": summary.n_trajectories,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / ".cache" / "bench-dashboard")
    parser.add_argument("--tasks-per-app", type=int, default=3)
    parser.add_argument("--max-steps", type=int, default=20)
    parser.add_argument("--fresh", action="store_true", help="Run every rollout again instead of reusing those under --out.")
    args = parser.parse_args()
    folders = asyncio.run(run_rollouts(args.out / "trajectories", args.tasks_per_app, args.max_steps, not args.fresh))
    print(json.dumps(measure(folders, args.out)))


if __name__ == "__main__":
    main()
