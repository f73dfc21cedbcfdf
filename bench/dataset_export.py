"""Benchmark of `aui export`: time and peak memory exporting a small and a large run; prints one JSON object last.

    .venv/bin/python bench/dataset_export.py [--small 2,2,3,5] [--large 52,1,30,20] [--batch-rows 100]

Each size is APPS,ROUNDS,TASKS,STEPS of a synthetic finished run made here (`make_run`: 150 distinct 1280×720 PNGs
hard-linked in turn into every trajectory, so no two rows of a row group share a screenshot).
The default large run is one round of the paper's size: 52 apps × 30 tasks = 1,560 rollouts of 20 steps.
Each export runs in a fresh interpreter, and its peak resident memory is the kernel's figure for that process
(its own VmHWM as it ends); `baseline_rss_mb` is the same interpreter importing `results` and pyarrow and exporting
nothing. Memory that stays flat from the small run to the large one is the streaming working (rows are written in
row groups of at most `--batch-rows` rows or 64 MB, one trajectory read at a time).
"""

from __future__ import annotations

import argparse
import io
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from PIL import Image, ImageDraw

from cua import Action, Point, Step, TerminationReason, Trajectory
from results import AppRoundResult, TaskOutcome, write_results
from verifier import VERDICTS_FILE, AppVerdicts, Verdict

PICTURES = 150

_EXPORT = ("import sys; from results import export_dataset; "
           "print(export_dataset([sys.argv[1]], sys.argv[2], batch_rows=int(sys.argv[3])).model_dump_json())")
_BASELINE = "import pyarrow, pyarrow.parquet, results"
_PEAK = "\nimport sys\nprint(open('/proc/self/status').read().split('VmHWM:')[1].split()[0], file=sys.stderr)"


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _picture(index: int) -> bytes:
    """A 1280×720 PNG unlike the others (what a screenshot of a simple app weighs: ≈ 40 KB)."""
    image = Image.new("RGB", (1280, 720), (248, 250, 252))
    draw = ImageDraw.Draw(image)
    draw.rectangle((0, 0, 1280, 56), fill=(37, 99, 235))
    draw.text((20, 18), f"Synthetic app - screen {index}", fill=(255, 255, 255))
    for row in range(6):
        for column in range(8):
            x, y = 40 + column * 155, 90 + row * 100
            draw.rounded_rectangle((x, y, x + 130, y + 60), radius=8, fill=(200 + (index * 7 + row * 13 + column) % 50,
                                                                             232, 240 - (index + column) % 40))
            draw.text((x + 12, y + 22), f"Button {row}-{column} #{index}", fill=(15, 23, 42))
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


def make_run(folder: Path, apps: int, rounds: int, tasks: int, steps: int) -> Path:
    """A finished run as the flows write one: results.json, manifest.json, per version verdicts.json, per task a
    trajectory of `steps` clicks whose screenshots cycle through `PICTURES` distinct PNGs (hard links: cheap to make,
    and no two rows of a row group share one, so compression cannot make the run look lighter than it is)."""
    run = folder / f"synthetic-{apps}x{rounds}x{tasks}x{steps}"
    pictures = folder / "pictures"
    pictures.mkdir(parents=True)
    for index in range(PICTURES):
        (pictures / f"{index}.png").write_bytes(_picture(index))
    results, shown = [], 0
    for app, round_ in ((app, round_) for app in range(apps) for round_ in range(rounds)):
        version = Path("apps", f"app-{app:02d}", "offline", f"round-{round_}")
        (run / version).mkdir(parents=True)
        (run / version / "index.html").write_text(f"<!doctype html><title>app {app} round {round_}</title>")
        outcomes = []
        for task in range(tasks):
            relative = version / "rollouts" / "heuristic" / f"task-{task}"
            (run / relative).mkdir(parents=True)
            for index in range(steps + 1):
                os.link(pictures / f"{shown % PICTURES}.png", run / relative / f"step_{index:03d}.png")
                shown += 1
            records = [Step(index=i, screenshot=f"step_{i:03d}.png", thought=f"press button {i}",
                            model_action=Action(kind="click", point=Point(x=40 + i * 50, y=120)),
                            screen_action=Action(kind="click", point=Point(x=40 + i * 50, y=120)),
                            checker_passed=i == steps and task % 2 == 0) for i in range(1, steps + 1)]
            Trajectory(app_id=f"app-{app:02d}", task_id=f"task-{task}", task="Press the buttons in order.",
                       policy="heuristic", offline=True, initial_screenshot="step_000.png", steps=records,
                       termination=TerminationReason.success if task % 2 == 0 else TerminationReason.max_steps,
                       success=task % 2 == 0).save(run / relative)
            outcomes.append(TaskOutcome(task_id=f"task-{task}", solvable=True, checker_valid=False, steps=steps,
                                        success=task % 2 == 0, trajectory=relative.as_posix()))
        verdicts = AppVerdicts(app_id=f"app-{app:02d}", domain="tool", html_sha256="0" * 64, verifier="offline",
                               offline=True, verdicts=[Verdict(task_id=o.task_id, solvable=False, model="offline")
                                                       for o in outcomes])
        (run / version / VERDICTS_FILE).write_text(verdicts.model_dump_json())
        results.append(AppRoundResult(app_id=f"app-{app:02d}", domain="tool", coder="offline", cua="heuristic",
                                      mode="integrated", round=round_, html=(version / "index.html").as_posix(),
                                      html_sha="0" * 64, tasks=outcomes))
    write_results(run, results, offline_roles=["coder", "verifier", "cua (heuristic)"])
    (run / "manifest.json").write_text(json.dumps({"offline": True, "offline_roles": ["coder", "verifier", "cua (heuristic)"],
                                                   "config": {"name": run.name, "rounds": rounds - 1}}))
    return run


def measured(code: str, *args: str) -> tuple[str, float, float]:
    """(stdout, seconds, peak RSS in MB) of `python -c code args…` in a fresh interpreter.

    The peak is the process's own (VmHWM, read as it ends), not `os.wait4`'s ru_maxrss: on Linux that also counts
    the memory of the process that started it (a parent holding 400 MB read 413 MB for `python -c pass`)."""
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-c", code + _PEAK, *args], capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"the export failed (exit {done.returncode}): {done.stderr[-2000:]}")
    return done.stdout, time.monotonic() - started, int(done.stderr.split()[-1]) / 1024  # kB


def export_size(root: Path, name: str, size: list[int], batch_rows: int) -> dict:
    log(f"{name}: making a synthetic run of {size[0]} apps × {size[1]} rounds × {size[2]} tasks × {size[3]} steps …")
    run = make_run(root / name, *size)
    screenshots = sum(path.stat().st_size for path in run.rglob("*.png"))  # each hard link: what the export reads
    log(f"{name}: exporting …")
    output, seconds, peak = measured(_EXPORT, str(run), str(root / f"{name}-dataset"), str(batch_rows))
    report = json.loads(output.strip().splitlines()[-1])
    return {"apps": size[0], "rounds": size[1], "tasks": size[2], "steps_per_rollout": size[3],
            "rollouts": report["episodes"], "step_rows": report["rows"]["steps"], "task_rows": report["rows"]["tasks"],
            "revision_rows": report["rows"]["revisions"], "screenshots_mb_read": round(screenshots / 1e6, 1),
            "dataset_mb": round(report["bytes"] / 1e6, 1), "seconds": round(seconds, 1),
            "export_seconds": report["seconds"], "peak_rss_mb": round(peak, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", default="2,2,3,5", help="APPS,ROUNDS,TASKS,STEPS of the small run.")
    parser.add_argument("--large", default="52,1,30,20", help="APPS,ROUNDS,TASKS,STEPS of the large run.")
    parser.add_argument("--batch-rows", type=int, default=100, help="Rows per row group (export_dataset's batch_rows).")
    args = parser.parse_args()
    _, _, baseline = measured(_BASELINE)
    with tempfile.TemporaryDirectory(prefix="bench-export-") as folder:
        figures = {name: export_size(Path(folder), name, [int(n) for n in getattr(args, name).split(",")],
                                     args.batch_rows) for name in ("small", "large")}
    small, large = figures["small"], figures["large"]
    print(json.dumps({"baseline_rss_mb": round(baseline, 1), "batch_rows": args.batch_rows, **figures,
                      "rows_ratio": round(large["step_rows"] / max(small["step_rows"], 1), 1),
                      "peak_rss_ratio": round(large["peak_rss_mb"] / small["peak_rss_mb"], 2)}))


if __name__ == "__main__":
    main()
