"""The `make run` job, timed: the offline design loop over all bundled apps, integrated revision, 2 rounds.

    .venv/bin/python bench/make_run.py [--out DIR] [--chromium PATH] [--concurrency N] [--code CHECKOUT] [--profile]

Runs `aui run --offline --mode integrated --rounds 2` (what `make run` runs after its set-up) as a
command of its own, in a fresh run folder with a fresh Prefect home (so nothing is cached: a new
user's first run), and samples its process tree (Python, the Playwright driver, Chromium and its
renderers, Prefect's server, the drawing process) every 2 s for memory and CPU by kind of process.
`--chromium` sets AUI_CHROMIUM for the run (default: whatever `BrowserConfig` picks);
`--profile` records the loop's Python with py-spy (threads while on the CPU, not pausing it) and lists the
functions most often on its stacks.

Figures: `loop_wall_s` (the `aui run` command, start to exit; target ≤ 300 s on 2 cores, issue 28),
`rollouts`, `steps`, `cpu_s_per_step` (CPU seconds of the whole tree per agent step), cores busy by
kind of process, peak PSS, SR per round (over every task of every app, pooled; the engine must not
change it), the Chromium binary the rollouts ran on (from the trajectories), and the step time split
(execute, settle, screenshot, checker) medians. The last line is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).parent))
from scale import TreeSampler, cores_between, top_frames  # noqa: E402  (the same process-tree sampler)

from results import read_results, table_rows

TARGET_LOOP_WALL_S = 300


def log(message: str) -> None:
    print(f"[bench/make_run] {message}", file=sys.stderr, flush=True)


def step_figures(run_dir: Path) -> dict:
    """Steps, the binaries that ran, and median step timings from every trajectory of the run."""
    steps, binaries = 0, {}
    timings: dict[str, list[float]] = {"execute_ms": [], "settle_ms": [], "screenshot_ms": [], "checker_ms": [], "total_ms": []}
    for path in run_dir.glob("apps/**/trajectory.json"):
        data = json.loads(path.read_text(encoding="utf-8"))
        steps += len(data.get("steps") or [])
        binary = data.get("chromium") or "not recorded"
        binaries[binary] = binaries.get(binary, 0) + 1
        for step in data.get("steps") or []:
            for key, values in timings.items():
                value = (step.get("timings") or {}).get(key)
                if value is not None:
                    values.append(float(value))
    medians = {f"step_{key}_median": round(statistics.median(v), 1) for key, v in timings.items() if v}
    return {"steps": steps, "chromium_by_trajectory": binaries, **medians}


def chromium_kind(command: str) -> str:
    """Chromium's processes by what they do: renderers, the GPU process (software compositing and
    raster here), the network and storage services, and the browser process itself (CDP, screenshots)."""
    if "--type=renderer" in command:
        return "chromium renderers"
    if "--type=gpu-process" in command:
        return "chromium gpu"
    if "--type=utility" in command:
        sub = command.split("--utility-sub-type=", 1)[1].split()[0] if "--utility-sub-type=" in command else "utility"
        return f"chromium utility ({sub.split('.')[0]})"
    if "--type=zygote" in command:
        return "chromium zygote"
    return "chromium browser"


def read_cpu(sampler: TreeSampler, seen: dict[int, tuple[str, float]]) -> None:
    """Every live process of the tree: its kind and CPU seconds so far. Sampled often (a process's last reading
    stands for it once it exits), never through a parent's waited-for children, which would count it twice."""
    try:
        processes = sampler.processes()
    except psutil.Error:
        return
    for process in processes:
        try:
            times = process.cpu_times()
            command = " ".join(process.cmdline())
        except psutil.Error:
            continue
        kind = sampler.kind(process)
        seconds = times.user + times.system
        if kind.startswith("chromium"):
            kind = chromium_kind(command)
        seen[process.pid] = (kind, seconds)


def results_figures(run_dir: Path) -> dict:
    results = read_results(run_dir).apps
    rollouts = sum(1 for r in results for t in r.tasks if t.trajectory)
    sr = {row.round: row.sr["overall"] for row in table_rows(results)}
    tasks = {r.round: 0 for r in results}
    for r in results:
        tasks[r.round] += len(r.tasks)
    return {"rollouts": rollouts, "sr_by_round": {str(k): (round(v * 100, 1) if v is not None else None) for k, v in sorted(sr.items())},
            "tasks_by_round": {str(k): v for k, v in sorted(tasks.items())}}


def _commit(folder: Path) -> str:
    try:
        head = subprocess.run(["git", "-C", str(folder), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
        dirty = subprocess.run(["git", "-C", str(folder), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True).stdout.strip()
        return head.stdout.strip() + ("+changes" if dirty else "")
    except OSError:
        return "?"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", help="folder for the run and its Prefect home (default: a new temporary folder)")
    parser.add_argument("--chromium", help="AUI_CHROMIUM for the run (default: BrowserConfig's choice)")
    parser.add_argument("--concurrency", type=int, help="rollouts in flight (default: the run's own)")
    parser.add_argument("--fresh-contexts", action="store_true", help="a fresh context for every app (AUI_REUSE_PAGES=0)")
    parser.add_argument("--code", help="run another checkout's code (e.g. a git worktree of the commit before a change; "
                        "it goes first on PYTHONPATH, with this checkout's venv) for before/after in one session")
    parser.add_argument("--profile", action="store_true", help="py-spy the loop's Python (idle threads left out)")
    args = parser.parse_args()

    out = Path(args.out or tempfile.mkdtemp(prefix="aui-bench-make-run-")).resolve()
    out.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ)
    env["PREFECT_HOME"] = str(out / "prefect-home")  # a fresh one: nothing cached, the server's first start included
    env.pop("PREFECT_API_URL", None)
    env["AUI_LLM_CACHE"] = "off"
    if args.chromium:
        env["AUI_CHROMIUM"] = args.chromium
    if args.fresh_contexts:
        env["AUI_REUSE_PAGES"] = "0"
    code = Path(args.code).resolve() if args.code else ROOT
    if args.code:
        env["PYTHONPATH"] = str(code)
    command = [str(ROOT / ".venv" / "bin" / "aui"), "run", "--offline", "--mode", "integrated", "--rounds", "2",
               "--name", "make-run", "--out", str(out / "runs")]
    if args.concurrency:
        command += ["--concurrency", str(args.concurrency)]
    result: dict = {"command": " ".join(command[1:]), "code": _commit(code), "cpus": os.cpu_count(), "load_average_at_start": round(os.getloadavg()[0], 2)}
    log(f"running: aui {' '.join(command[1:])}  (load {result['load_average_at_start']})")
    started = time.time()
    process = subprocess.Popen(command, cwd=code, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    spy = None
    if args.profile:
        spy_bin = str(Path(sys.executable).with_name("py-spy"))
        spy = subprocess.Popen([spy_bin, "record", "--pid", str(process.pid), "--nonblocking", "--format", "raw", "--rate", "50",
                                "--output", str(out / "profile.txt")], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    with TreeSampler(set(), interval_s=2.0, root_pid=process.pid) as sampler:
        tail: list[str] = []
        reader = threading.Thread(target=lambda: tail.extend(line.rstrip() for line in process.stdout), daemon=True)
        reader.start()
        seen: dict[int, tuple[str, float]] = {}  # pid → (kind, its CPU seconds at the last reading)
        while process.poll() is None:
            read_cpu(sampler, seen)
            time.sleep(0.25)
        wall = time.time() - started
        reader.join(timeout=10)
    cpu_by_kind: dict[str, float] = {}
    for kind, seconds in seen.values():
        cpu_by_kind[kind] = cpu_by_kind.get(kind, 0.0) + seconds
    cpu_s = sum(cpu_by_kind.values())
    if spy is not None:
        spy.terminate()
        spy.wait(timeout=30)
    if process.returncode != 0:
        log("\n".join(tail[-40:]))
        raise SystemExit(f"aui run exited {process.returncode}")
    log("\n".join(tail[-25:]))
    run_dir = out / "runs" / "make-run"
    cores = cores_between({}, cpu_by_kind, wall)
    result.update(loop_wall_s=round(wall, 1), target_loop_wall_s=TARGET_LOOP_WALL_S, **results_figures(run_dir),
                  **step_figures(run_dir))
    manifest = json.loads((run_dir / "manifest.json").read_text(encoding="utf-8"))
    browser = manifest.get("browser") or {}
    result.update(cpu_s=round(cpu_s, 1), cpu_s_per_step=round(cpu_s / max(1, result["steps"]), 3),
                  cores_busy_by_process=cores, cores_busy=round(cpu_s / wall, 2),
                  peak_pss_mb=round(sampler.peak_pss_mb, 1), peak_pss_by_kind=sampler.peak_pss_by_kind,
                  peak_rss_mb=round(sampler.peak_mb, 1),
                  chromium=browser.get("binary") or manifest.get("chromium_path"), reuse_pages=browser.get("reuse_pages"),
                  chromium_version=manifest.get("chromium"),
                  load_average_at_end=round(os.getloadavg()[0], 2), out=str(out))
    if args.profile:
        result["profile_top"] = top_frames(out / "profile.txt", 20)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
