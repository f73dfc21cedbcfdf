"""Concurrent rollouts at model speed: throughput, memory and CPU at N = 1, 4, 8, 16, 32 rollouts in flight.

    .venv/bin/python bench/scale.py [--ns 1,4,8,16,32] [--steps 10] [--latency 1.0] [--waves 2]

Each rollout is the loop's own rollout stage (a Prefect task with its cache key and persisted
result, on the ephemeral server's SQLite), UI-TARS through the real `openai` client against a
`LatencyOpenAIServer` in a process of its own (the model is elsewhere, as a real one would be):
every call answers after `--latency` seconds with a click on the next visible control of the app
(`LatencyRoles(cua="explore")`), so rollouts run `--steps` steps unless the stuck rules end them.
For each N, `--waves` × N rollouts run with the run's concurrency (browser slots) at N.

Figures per N: steps/s (steps / wall time), gain over N = 1, peak RSS of this process tree
(Python, the Playwright driver, Chromium and its children; the model server excluded), CPU cores
busy (CPU seconds of the tree / wall seconds), and per step the time beyond the model's own
latency: p50 / p95 of `total_ms - latency` (everything: the client, the browser, the stage) and of
`model_ms - latency` (the client's request, the HTTP exchange, waiting for the event loop).
Targets (issue 19): N = 16 ≥ 12× the N = 1 throughput within 2 GB; N = 32 ≥ 20× within 3 GB.
The last line is one JSON object with gain_16, rss_mb_16, pss_mb_16, gain_32, rss_mb_32, pss_mb_32 and the
Chromium binary the rollouts ran on.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import signal
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

import psutil

from apps_prompts import BUNDLED_DIR, Task, TaskCategory, load_app, reference_html_path
from cua import DEFAULT_VIEWPORT, BrowserConfig, close_browser
from flows import PREFECT_STAGES, AgentSettings, RunContext, use_browser_slots
from flows.testing import ROLE_MODELS, LatencyRoles, plan_apps, write_latency_models
from llm import Latency
from llm.testing import LatencyOpenAIServer

APP = "rgb-color-mixer"
TARGETS = {16: (12.0, 2048), 32: (20.0, 3072)}


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def serve(roles, latency_s: float, port_queue, stop) -> None:
    """The model server's process: answers until `stop` is set."""
    with LatencyOpenAIServer(roles, Latency.fixed(latency_s)) as server:
        port_queue.put(server.port)
        stop.wait()


def cores_between(before: dict[str, float], after: dict[str, float], wall_s: float) -> dict[str, float]:
    """Cores busy per kind of process between two `TreeSampler.cpu_by_kind()` readings `wall_s` apart."""
    return {kind: round((seconds - before.get(kind, 0.0)) / wall_s, 2)
            for kind, seconds in sorted(after.items(), key=lambda kv: -kv[1])}


class TreeSampler:
    """Peak RSS of this process tree (minus `exclude`), sampled every `interval_s` in a thread."""

    def __init__(self, exclude: set[int], interval_s: float = 0.25, root_pid: int | None = None):
        self.exclude, self.interval_s = exclude, interval_s
        self.root_pid = root_pid or os.getpid()
        self.peak_mb = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def processes(self) -> list[psutil.Process]:
        root = psutil.Process(self.root_pid)
        return [p for p in [root, *root.children(recursive=True)] if p.pid not in self.exclude]

    def pss_mb(self) -> float:
        """Proportional set size: shared pages (Chromium's processes share most of theirs) counted once;
        the split by kind of process at the highest total is kept in `peak_pss_by_kind`."""
        by_kind: dict[str, float] = {}
        for process in self.processes():
            try:
                with open(f"/proc/{process.pid}/smaps_rollup") as handle:
                    kb = next(int(line.split()[1]) for line in handle if line.startswith("Pss:"))
            except (OSError, StopIteration, ValueError):
                continue
            kind = self.kind(process)
            by_kind[kind] = by_kind.get(kind, 0.0) + kb / 1024
        total = sum(by_kind.values())
        if total > getattr(self, "peak_pss_mb", 0.0):
            self.peak_pss_by_kind = {kind: round(mb) for kind, mb in sorted(by_kind.items(), key=lambda kv: -kv[1])}
        return total

    def kind(self, process: psutil.Process) -> str:
        try:
            command = " ".join(process.cmdline())
            name = process.name()
        except psutil.Error:
            return "gone"
        if process.pid == self.root_pid:
            return "python (the loop)"
        if "chrom" in command:
            return "chromium renderers" if "--type=renderer" in command else "chromium (browser, gpu, utility)"
        if "playwright" in command or "node" in name:
            return "playwright driver"
        if "prefect" in command or "uvicorn" in command:
            return "prefect server"
        if "multiprocessing" in command:
            return "dashboard drawing process"
        return name

    def cpu_by_kind(self) -> dict[str, float]:
        """CPU seconds so far per kind of process: this Python process, Chromium, the Playwright driver, Prefect's server.

        A closed context's renderer exits: its CPU then counts in its Chromium parent's (the zygote's)
        waited-for children, so that goes to "chromium renderers" — without it most renderer CPU of a
        run whose rollouts come and go would be missing."""
        kinds: dict[str, float] = {}
        for process in self.processes():
            try:
                times = process.cpu_times()
            except psutil.Error:
                continue
            kind = self.kind(process)
            kinds[kind] = kinds.get(kind, 0.0) + times.user + times.system
            if kind.startswith("chromium"):
                kinds["chromium renderers"] = kinds.get("chromium renderers", 0.0) + times.children_user + times.children_system
        return kinds

    def rss_mb(self) -> float:
        total = 0
        for process in self.processes():
            try:
                total += process.memory_info().rss
            except psutil.Error:
                continue
        return total / 2**20

    def cpu_s(self) -> float:
        """CPU seconds of the tree, counting children that exited and were waited for (closed renderers)."""
        total = 0.0
        for process in self.processes():
            try:
                times = process.cpu_times()
                total += times.user + times.system + times.children_user + times.children_system
            except psutil.Error:
                continue
        return total

    def _run(self) -> None:
        ticks = 0
        while not self._stop.wait(self.interval_s):
            ticks += 1
            self.peak_mb = max(self.peak_mb, self.rss_mb())
            if ticks % 4 == 0:  # reading smaps_rollup costs the sampled process tree CPU: less often
                self.peak_pss_mb = max(self.peak_pss_mb, self.pss_mb())

    def __enter__(self) -> TreeSampler:
        self.peak_mb = self.rss_mb()
        self.peak_pss_mb, self.peak_pss_by_kind = 0.0, {}
        self.peak_pss_mb = self.pss_mb()
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join(timeout=5)


def start_profile(path: Path):
    """py-spy sampling this process (threads that hold the GIL only: work that keeps the event loop
    from running) until terminated; a collapsed-stack file at `path`."""
    import shutil
    import subprocess

    spy = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
    return subprocess.Popen([spy, "record", "--pid", str(os.getpid()), "--gil", "--format", "raw", "--rate", "50",
                             "--output", str(path)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def top_frames(path: Path, count: int = 12) -> list[tuple[str, float]]:
    """The functions most often on the GIL-holding stacks of a py-spy collapsed file (share of samples)."""
    try:
        lines = path.read_text().splitlines()
    except OSError:
        return []
    total, own = 0, {}
    for line in lines:
        stack, _, samples = line.rpartition(" ")
        if not samples.isdigit():
            continue
        total += int(samples)
        for frame in set(stack.split(";")):
            name = frame.split(" (")[0] + " (" + frame.split("/")[-1] if "/" in frame else frame
            own[name] = own.get(name, 0) + int(samples)
    return [(name, round(hits / total, 3)) for name, hits in sorted(own.items(), key=lambda kv: -kv[1])[:count]] if total else []


def percentile(values: list[float], fraction: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


async def main(args: argparse.Namespace) -> dict:
    from prefect import flow



    out = Path(args.out or tempfile.mkdtemp(prefix="aui-bench-scale-"))
    out.mkdir(parents=True, exist_ok=True)
    spec = load_app(APP)
    html = Path(reference_html_path(spec)).read_text(encoding="utf-8")
    plans = await plan_apps({APP: (html, [])}, count=1)
    log(f"{APP}: {len(plans[APP].controls)} visible controls for the CUA to click in turn")
    tasks_by_n = {n: [Task(id=f"explore-{n}-{k}", description=f"Explore the colour mixer, pass {n}.{k}.",
                           category=TaskCategory.core_function, expected_outcome="Nothing in particular.")
                      for k in range(max(args.waves * n, 2))] for n in args.ns}
    roles = LatencyRoles(plans, {APP: spec.prompt_text()}, cua="explore")
    roles.explore(APP, [t.description for tasks in tasks_by_n.values() for t in tasks])

    context = multiprocessing.get_context("spawn")
    port_queue, stop = context.Queue(), context.Event()
    server = context.Process(target=serve, args=(roles, args.latency, port_queue, stop), daemon=True)
    server.start()
    port = port_queue.get(timeout=120)

    class Where:  # what write_latency_models needs of a server
        base_url = f"http://127.0.0.1:{port}/v1"

    models = write_latency_models(Where, out / "models.yaml", timeout_s=120)

    # No annotations: Prefect would resolve them as strings (`from __future__`) in this function's scope.
    @flow(name="scale-bench", flow_run_name="scale N={n}", validate_parameters=False)
    async def rollouts_at(n, run, tasks, html_text, steps):
        use_browser_slots(n)
        html_ref = run.write(Path("apps", APP, "index.html"), html_text)
        agent = AgentSettings(policy="uitars", model=ROLE_MODELS["cua"], max_steps=steps, viewport=DEFAULT_VIEWPORT)
        return await asyncio.gather(*(PREFECT_STAGES.rollout(
            run=run, app_id=APP, round=0, task=task, checker=None, html=html_ref, agent=agent,
            out_path=f"rollouts/{task.id}") for task in tasks))

    def context_for(name: str) -> RunContext:
        run_dir = (out / name).resolve()
        run_dir.mkdir(parents=True, exist_ok=True)
        return RunContext(run_key=uuid.uuid4().hex, run_dir=str(run_dir), apps=str(BUNDLED_DIR), models=str(models))

    result: dict = {"app": APP, "latency_s": args.latency, "steps_per_rollout": args.steps, "waves": args.waves,
                    "cpus": os.cpu_count(), "load_average_at_start": round(os.getloadavg()[0], 2), "by_n": {}}
    try:
        log("warm-up (Prefect's server, the browser, the first connection) …")
        await rollouts_at(1, context_for("warmup"), tasks_by_n[args.ns[0]][:1], html, 2)
        for n in args.ns:
            run = context_for(f"n{n}")
            log(f"N = {n}: {len(tasks_by_n[n])} rollouts of up to {args.steps} steps …")
            profiler = start_profile(out / f"profile-n{n}.txt") if n in args.profile else None
            with TreeSampler({server.pid} | ({profiler.pid} if profiler else set())) as sampler:
                cpu_started, by_kind, started = sampler.cpu_s(), sampler.cpu_by_kind(), time.perf_counter()
                refs = await rollouts_at(n, run, tasks_by_n[n], html, args.steps)
                wall = time.perf_counter() - started
                cores = (sampler.cpu_s() - cpu_started) / wall
                kinds = cores_between(by_kind, sampler.cpu_by_kind(), wall)
            if profiler is not None:
                profiler.send_signal(signal.SIGINT)  # py-spy writes its file on an interrupt
                profiler.wait(timeout=60)
            beyond, client = [], []
            for ref in refs:
                trajectory = json.loads((Path(run.run_dir) / ref.trajectory / "trajectory.json").read_text())
                for step in trajectory["steps"]:
                    timings = step.get("timings") or {}
                    if timings.get("model_ms"):
                        beyond.append(timings["total_ms"] - args.latency * 1000)
                        client.append(timings["model_ms"] - args.latency * 1000)
            steps = sum(ref.steps for ref in refs)
            figures = {"rollouts": len(refs), "steps": steps, "wall_s": round(wall, 2),
                       "steps_per_s": round(steps / wall, 3), "peak_rss_mb": round(sampler.peak_mb, 1),
                       "peak_pss_mb": round(sampler.peak_pss_mb, 1), "peak_pss_by_process": sampler.peak_pss_by_kind,
                       "cores_busy": round(cores, 2), "cores_busy_by_process": kinds,
                       "terminations": dict(sorted({t: sum(r.termination == t for r in refs)
                                                    for t in {r.termination for r in refs}}.items())),
                       "beyond_model_ms_p50": round(percentile(beyond, 0.5) or 0, 1),
                       "beyond_model_ms_p95": round(percentile(beyond, 0.95) or 0, 1),
                       "client_ms_p50": round(percentile(client, 0.5) or 0, 1),
                       "client_ms_p95": round(percentile(client, 0.95) or 0, 1),
                       "load_average": round(os.getloadavg()[0], 2)}
            if profiler is not None:
                figures["profile"] = str(out / f"profile-n{n}.txt")
                figures["profile_top"] = top_frames(out / f"profile-n{n}.txt")
            result["by_n"][n] = figures
            log(f"  {json.dumps(figures)}")
    finally:
        await close_browser()
        stop.set()
        server.join(timeout=10)
    base = result["by_n"].get(1, {}).get("steps_per_s")
    for n, figures in result["by_n"].items():
        figures["gain"] = round(figures["steps_per_s"] / base, 2) if base else None
    for n in (16, 32):
        if n in result["by_n"]:
            result[f"gain_{n}"] = result["by_n"][n]["gain"]
            result[f"rss_mb_{n}"] = result["by_n"][n]["peak_rss_mb"]
            result[f"pss_mb_{n}"] = result["by_n"][n]["peak_pss_mb"]
            gain, memory = TARGETS[n]
            # each target on its own: a gain met with too much memory is still a gain met (and the other way)
            met = result.setdefault("targets_met", {})
            met[f"gain_{n}"] = bool(result[f"gain_{n}"] and result[f"gain_{n}"] >= gain)
            met[f"pss_mb_{n}"] = result[f"pss_mb_{n}"] <= memory

    result["chromium"] = BrowserConfig().executable_path  # the binary every rollout here ran on
    result["out"] = str(out)
    return result


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ns", type=lambda text: [int(n) for n in text.split(",")], default=[1, 4, 8, 16, 32])
    parser.add_argument("--steps", type=int, default=10, help="Steps per rollout (max_steps).")
    parser.add_argument("--latency", type=float, default=1.0, help="Seconds per model call.")
    parser.add_argument("--waves", type=int, default=2, help="Rollouts per N, in multiples of N.")
    parser.add_argument("--profile", type=lambda text: [int(n) for n in text.split(",") if n], default=[],
                        help="py-spy this process while these N run (e.g. 16): collapsed stacks in the out folder.")
    parser.add_argument("--out", help="Keep the run folders here (default: a temp folder).")
    parser.add_argument("--renderer-process-limit", type=int, default=None,
                        help="Launch Chromium with --renderer-process-limit=N (measuring whether sharing renderers pays).")
    arguments = parser.parse_args()
    if arguments.renderer_process_limit:
        # A measurement, not a setting: the switch reaches this process's launches only (`cua.launch_args`).
        os.environ["AUI_CHROMIUM_ARGS"] = " ".join(filter(None, [os.environ.get("AUI_CHROMIUM_ARGS", ""),
                                                    f"--renderer-process-limit={arguments.renderer_process_limit}"]))
    result = asyncio.run(main(arguments))
    result["renderer_process_limit"] = arguments.renderer_process_limit
    print(json.dumps(result))
