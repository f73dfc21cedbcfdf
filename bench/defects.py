"""Benchmark of GUI defects (GTArena's way) on the bundled apps, offline; prints one JSON object as its last line.

    .venv/bin/python bench/defects.py [--out DIR] [--apps a,b] [--seeds 2] [--twice] [--reuse]

1. `aui defects inject` over the bundled apps × every implemented type × `--seeds` seeds (2): each
   defect bound to a reference-solution step, proven on the page or dropped with its reason →
   `injections_proven` / `injections_attempted`, per type too; then the labelled dataset (each
   proven defect rolled out by the solution-following agent, beside its task on the defect-free app).
2. `aui defects eval --detector offline` (the rule-based baseline, reference-assisted: it compares
   with the defect-free app), `--detector offline-blind` (the same rules without it: like for like
   with GTArena's detectors) and `--detector commenter` (the offline commenter's findings mapped to
   tuples) on that dataset: Accuracy, Recall-D, Recall-N overall and per type (fractions), and the
   tuples scored.
3. Wall time of each part, and the load average at the start and the end (the machine is shared:
   times are noisy, the figures are not). With `--twice` everything runs again into a second folder
   and `repeat_identical` says whether the defect set (bytes) and every figure came out the same.
   `--reuse` keeps the defect sets and datasets already in `--out` and scores the detectors again.
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

from commenter.detector import DetectorMetrics, metrics_path
from perturb import DefectSet

ROOT = Path(__file__).resolve().parent.parent
DETECTORS = (("offline", "detector"), ("offline-blind", "blind_detector"), ("commenter", "commenter"))
"""Each detector scored, and the prefix of its figures in the output."""


def log(message: str) -> None:
    print(f"[bench/defects] {message}", file=sys.stderr, flush=True)


def aui(*arguments: str) -> None:
    command = [str(Path(sys.executable).with_name("aui")), *arguments]
    log(" ".join(command))
    subprocess.run(command, check=True, cwd=ROOT, stdout=subprocess.DEVNULL)


def rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def figures_of(run_dir: Path) -> dict:
    """The defect set's counts and each detector's figures, read through the models the commands write."""
    from collections import Counter


    defect_set = DefectSet.read(run_dir)
    attempted = Counter(r.type for r in defect_set.records)
    proven = Counter(r.type for r in defect_set.proven)
    found = {"types_implemented": len(defect_set.types), "injections_attempted": len(defect_set.records),
             "injections_proven": len(defect_set.proven),
             "proven_per_type": {name: [proven[name], attempted[name]] for name in defect_set.types}}
    for detector, prefix in DETECTORS:
        metrics = DetectorMetrics.model_validate_json(metrics_path(run_dir, detector).read_bytes())
        overall = metrics.overall
        found[f"{prefix}_reference_assisted"] = metrics.reference_assisted
        found.update({f"{prefix}_accuracy": rounded(overall.accuracy), f"{prefix}_recall_d": rounded(overall.recall_d),
                      f"{prefix}_recall_n": rounded(overall.recall_n), f"{prefix}_tuples": overall.tuples,
                      f"{prefix}_defective_tuples": overall.defective, f"{prefix}_errors": overall.errors})
        found[f"{prefix}_per_type"] = {name: {"recall_d": rounded(rates.recall_d), "type_accuracy": rounded(rates.type_accuracy),
                                              "tuples": rates.tuples} for name, rates in metrics.by_type.items()}
        found[f"{prefix}_per_kind"] = {kind: {"accuracy": rounded(rates.accuracy), "recall_d": rounded(rates.recall_d)}
                                       for kind, rates in metrics.by_kind.items()}
    return found


def one_pass(run_dir: Path, args: argparse.Namespace) -> tuple[dict, dict]:
    """Inject, roll out, score both detectors into `run_dir`: (figures, wall times in s)."""
    times = {}
    started = time.monotonic()
    if args.reuse and (run_dir / "defects.json").is_file() and (run_dir / "dataset").is_dir():
        log(f"reusing the defect set and dataset in {run_dir}")  # the detectors are scored again on them
    else:
        inject = ["defects", "inject", "--out", str(run_dir), "--per-app", str(args.seeds)]
        for app_id in filter(None, (args.apps or "").split(",")):
            inject += ["--app", app_id.strip()]
        aui(*inject)
        times["inject_and_rollouts_s"] = round(time.monotonic() - started, 1)
    for detector, _ in DETECTORS:
        started = time.monotonic()
        aui("defects", "eval", str(run_dir), "--detector", detector)
        times[f"eval_{detector}_s"] = round(time.monotonic() - started, 1)
    return figures_of(run_dir), times


def main(args: argparse.Namespace) -> dict:
    out = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="bench-defects-"))
    load_start = os.getloadavg()[0]
    started = time.monotonic()
    first = out / "first"
    figures, times = one_pass(first, args)
    log(f"{figures['injections_proven']}/{figures['injections_attempted']} proven; offline detector accuracy "
        f"{figures['detector_accuracy']}, Recall-D {figures['detector_recall_d']}, Recall-N {figures['detector_recall_n']} "
        f"(reference-assisted); blind {figures['blind_detector_accuracy']}, {figures['blind_detector_recall_d']}, "
        f"{figures['blind_detector_recall_n']}")
    result = {"bench": "defects", "run_dir": str(first), **figures, "wall_s": times}
    if args.twice:
        second = out / "second"
        again, times_again = one_pass(second, args)
        result["wall_s_second"] = times_again
        result["repeat_identical"] = again == figures and \
            (first / "defects.json").read_bytes() == (second / "defects.json").read_bytes()
        if again != figures:
            result["repeat_differences"] = {k: [figures.get(k), again.get(k)] for k in figures if figures.get(k) != again.get(k)}
    result["wall_s_total"] = round(time.monotonic() - started, 1)
    result["load_average"] = [round(load_start, 2), round(os.getloadavg()[0], 2)]
    return result


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", help="Folder for the runs (default: a new temporary folder).")
    parser.add_argument("--apps", help="Only these app ids, comma-separated (default: every bundled app).")
    parser.add_argument("--seeds", type=int, default=2, help="Seeds per app and type (default 2).")
    parser.add_argument("--twice", action="store_true", help="Run everything twice and compare (repeat_identical).")
    parser.add_argument("--reuse", action="store_true", help="Keep a defect set and dataset already in --out (first/, "
                        "second/) and only score the detectors again.")
    print(json.dumps(main(parser.parse_args())))
