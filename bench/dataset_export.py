"""Benchmark of `aui export`: time and peak memory exporting a small and a large run; prints one JSON object last.

    .venv/bin/python bench/dataset_export.py [--small 2,2,3,5] [--large 52,1,30,20] [--batch-rows 100]

Each size is APPS,ROUNDS,TASKS,STEPS of a synthetic finished run (`viewer.testing.synthetic_run`: real 1280×720
PNGs, hard-linked into every trajectory; a `verdicts.json` per version is added here, as the export reads one).
The default large run is one round of the paper's size: 52 apps × 30 tasks = 1,560 rollouts of 20 steps.
Each export runs in a fresh interpreter, and its peak resident memory is the kernel's figure for that process
(`os.wait4`'s ru_maxrss); `baseline_rss_mb` is the same interpreter importing `results` and pyarrow and exporting
nothing. Memory that stays flat from the small run to the large one is the streaming working (rows are written in
row groups of at most `--batch-rows` rows or 64 MB, one trajectory read at a time).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from results import read_results
from verifier import VERDICTS_FILE, AppVerdicts, Verdict
from viewer.testing import synthetic_run

_EXPORT = ("import sys; from results import export_dataset; "
           "print(export_dataset([sys.argv[1]], sys.argv[2], batch_rows=int(sys.argv[3])).model_dump_json())")
_BASELINE = "import pyarrow, pyarrow.parquet, results"


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def make_run(folder: Path, apps: int, rounds: int, tasks: int, steps: int) -> Path:
    run = synthetic_run(folder, apps=apps, rounds=rounds, tasks=tasks, steps=steps, name=f"synthetic-{apps}x{rounds}x{tasks}x{steps}")
    for result in read_results(run).apps:
        verdicts = AppVerdicts(app_id=result.app_id, domain=result.domain, html_sha256=result.html_sha, verifier="offline",
                               offline=True, verdicts=[Verdict(task_id=t.task_id, solvable=False, model="offline")
                                                       for t in result.tasks])
        (run / Path(result.html).parent / VERDICTS_FILE).write_text(verdicts.model_dump_json())
    return run


def measured(code: str, *args: str) -> tuple[str, float, float]:
    """(stdout, seconds, peak RSS in MB) of `python -c code args…` in a fresh interpreter."""
    started = time.monotonic()
    process = subprocess.Popen([sys.executable, "-c", code, *args], stdout=subprocess.PIPE, text=True)
    output = process.stdout.read()
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode:
        raise SystemExit(f"the export failed (exit {process.returncode})")
    return output, time.monotonic() - started, usage.ru_maxrss / 1024  # Linux: kilobytes


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
