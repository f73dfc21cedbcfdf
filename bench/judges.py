"""Benchmark of the judges on the bundled apps, offline; prints one JSON object as its last line.

    .venv/bin/python bench/judges.py [--out DIR] [--max-steps 20] [--markdown]

1. `aui run --offline --rounds 0` over the bundled apps (heuristic agent, offline verifier):
   `fc` and `fc_proven` of round 0, pooled over all tasks (every bundled task carries a reference
   solution, so `fc_proven` must equal `fc` here), and SR over all and over proven tasks.
2. The planted corpus (`verifier.testing.PLANTED`: never-true or unprovable checkers on
   the bundled apps) sent as a verifier model's replies through the real `openai` client to a local
   scripted server: `planted_caught` = how many end `claimed` or `unsupported` (never `proven`);
   must equal `planted_total`.
3. The offline judge (`judge_run(run_dir, "offline")`, text-only) against the checker on every
   trajectory of that run: `offline_judge_kappa_vs_checker`, `offline_judge_balanced_accuracy`
   (the checker as reference), agreement and n. These describe the baseline judge; they are not
   targets. `--markdown` prints, before the JSON line, the run's agreement table as `aui report` prints
   it (`results.agreement_records`).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from results import agreement_records, records_markdown
from verifier.judge import agreement_report, judge_run
from verifier.testing import run_planted_corpus

ROOT = Path(__file__).resolve().parent.parent
OFFLINE_JUDGE_PAIR = ("checker", "offline judge (screenshot)")


def log(message: str) -> None:
    print(f"[bench/judges] {message}", file=sys.stderr, flush=True)


def offline_run(out: Path, max_steps: int) -> Path:
    """The bundled apps' round 0, offline (a real `aui run`: Prefect, Chromium, the offline verifier)."""
    aui = Path(sys.executable).with_name("aui")
    command = [str(aui), "run", "--offline", "--rounds", "0", "--out", str(out), "--name", "judges",
               "--max-steps", str(max_steps)]
    log(" ".join(command))
    subprocess.run(command, check=True, cwd=ROOT, stdout=subprocess.DEVNULL)
    return out / "judges"


def round_zero(run_dir: Path) -> dict:
    data = json.loads((run_dir / "results.json").read_text(encoding="utf-8"))
    tasks = [task for app in data["apps"] if app["round"] == 0 for task in app["tasks"]]
    proven = [task for task in tasks if task.get("proof") == "proven"]
    return {
        "tasks": len(tasks),
        "fc": round(sum(task["checker_valid"] for task in tasks) / len(tasks), 4),
        "fc_proven": round(len(proven) / len(tasks), 4),
        "sr": round(sum(task["success"] and task["checker_valid"] for task in tasks) / len(tasks), 4),
        "sr_proven": round(sum(task["success"] for task in proven) / len(proven), 4) if proven else None,
        "not_proven": sorted(f"{app['app_id']}/{task['task_id']}: {task.get('proof_reason')}"
                             for app in data["apps"] if app["round"] == 0
                             for task in app["tasks"] if task.get("proof") != "proven"),
    }


def summarise_planted(outcomes: list) -> dict:
    """Caught = ended `claimed` or `unsupported`; an escaped one (`proven`) is named `app/task (kind)`."""
    escaped = [o for o in outcomes if o.proof == "proven"]
    return {"planted_caught": len(outcomes) - len(escaped), "planted_total": len(outcomes),
            "planted_escaped": [f"{o.app}/{o.task} ({o.kind})" for o in escaped]}


async def planted() -> dict:
    return summarise_planted(await run_planted_corpus())


async def offline_judge(run_dir: Path) -> dict:
    started = time.monotonic()
    judgements = await judge_run(run_dir, "offline")
    elapsed = time.monotonic() - started
    report = agreement_report(run_dir)
    pair = next(p for p in report.pairs if {p.reference, p.other} == set(OFFLINE_JUDGE_PAIR))
    return {
        "offline_judge_kappa_vs_checker": None if pair.kappa is None else round(pair.kappa, 4),
        "offline_judge_balanced_accuracy": None if pair.balanced_accuracy is None else round(pair.balanced_accuracy, 4),
        "offline_judge_agreement": None if pair.agreement is None else round(pair.agreement, 4),
        "offline_judge_n": pair.n,
        "offline_judge_undecided": sum(j.success is None for j in judgements),
        "offline_judge_confusion": pair.confusion.model_dump(),
        "offline_judge_ms_per_trajectory": round(1000 * elapsed / max(len(judgements), 1), 2),
    }


async def main(args: argparse.Namespace) -> dict:
    out = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="bench-judges-"))
    load_start = os.getloadavg()[0]
    run_dir = offline_run(out, args.max_steps)
    figures = {"bench": "judges", "run_dir": str(run_dir), **round_zero(run_dir)}
    log(f"FC {figures['fc']} · FC proven {figures['fc_proven']} over {figures['tasks']} tasks")
    figures.update(await planted())
    log(f"planted: {figures['planted_caught']}/{figures['planted_total']} caught")
    figures.update(await offline_judge(run_dir))
    figures["targets"] = {"fc_proven_equals_fc": figures["fc_proven"] == figures["fc"],
                          "planted_caught_share": figures["planted_caught"] / max(figures["planted_total"], 1)}
    figures["load_average"] = [round(load_start, 2), round(os.getloadavg()[0], 2)]
    if args.markdown:
        print(records_markdown(agreement_records(agreement_report(run_dir))) + "\n", flush=True)
    return figures


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", help="Runs folder (default: a new temporary folder).")
    parser.add_argument("--max-steps", type=int, default=20)
    parser.add_argument("--markdown", action="store_true", help="Print the agreement table as Markdown before the JSON line.")
    print(json.dumps(asyncio.run(main(parser.parse_args()))))
