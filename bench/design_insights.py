"""Benchmark of design insights; prints one JSON object as its last line.

    .venv/bin/python bench/design_insights.py [--run DIR] [--out DIR] [--rounds 2] [--ablate P …] [--markdown]

The bundled offline run (`make run`'s job: every bundled app, integrated revision, rounds 0–2; the
stages' plain functions, no Prefect), unless `--run` names a finished run to read instead; then its
insights (the change log, the flips and what touched them, the principle table) and one ablation: the
principle with the largest net association, left out of every revision that applied it, on the same
tasks. Prints `principles` (how many appear), `flips_attributed_ratio` (flips with at least one linked
change / all flips; target ≥ 0.8), `ablation_principle`, `ablation_revisions` (the revisions it made again:
by the change log's decision, so `ablation_table_revisions`, the principle table's, is the same number),
`ablation_paired_diff` (SR of the ablated revisions minus the full ones on the same tasks) with
`ablation_ci95`, and the wall times; `changes`: the change log's verdicts per kind (made, asked), counted changes.
`--ablate P` ablates principle P too, unless it is the strongest (after it; figures under `also_ablated`). `--markdown` prints,
before the JSON line, the tables the project's printers make of them: the run's paired comparisons of rounds
(results.md's), the principle table (`insights.principle_table`) and the ablations (`results.ablations_markdown`).
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

from experiment import make_config
from flows import ablate_run, sweep_without_prefect
from insights import insights_of, principle_table, write_insights
from results import CHANGE_STATUSES, INSIGHTS_FILE, Insights, ablations_markdown, comparisons_markdown, read_results

TARGETS = {"flips_attributed_ratio": 0.8}


def change_counts(found: Insights) -> dict:
    """The change log's verdicts: per kind (made by the coder, asked by the commenter), how many changes had each
    status; `counted` is what the principle table counts."""
    counts: dict = {}
    for change in found.changes:
        kind = counts.setdefault(change.kind, {"total": 0, "counted": 0, **dict.fromkeys(CHANGE_STATUSES, 0)})
        kind["total"] += 1
        kind["counted"] += change.counted
        kind[change.status] += 1
    return counts


def print_tables(run_dir: Path, found: Insights, ablations: list) -> None:
    """The tables the project's own printers make (results.md's comparisons, the principle table, the ablations)."""
    sections = ["Paired comparisons of SR on the same tasks (results.md):",
                comparisons_markdown(read_results(run_dir).comparisons),
                "Principles (insights.principle_table; association, not cause):", principle_table(found)]
    if ablations:
        sections += ["Ablations (results.ablations_markdown; cause):", ablations_markdown(ablations)]
    print("\n\n".join(sections) + "\n", flush=True)


async def main(args: argparse.Namespace) -> dict:
    started = time.perf_counter()
    report: dict = {"load_avg_1m": round(os.getloadavg()[0], 2)}
    if args.run:
        run_dir = Path(args.run)
    else:
        config = make_config({"name": "offline-bundled", "revision_modes": ["integrated"], "rounds": args.rounds,
                              "out_dir": args.out or tempfile.mkdtemp(prefix="bench-insights-")})
        await sweep_without_prefect(config)
        run_dir = config.run_dir
        report["run_s"] = round(time.perf_counter() - started, 1)
    report["run"] = str(run_dir)

    mark = time.perf_counter()
    found = await insights_of([run_dir])
    write_insights(found, run_dir / INSIGHTS_FILE)
    report["insights_s"] = round(time.perf_counter() - mark, 1)
    report.update(principles=len(found.principles), pairs=found.pairs, flips=found.flips_total,
                  flips_attributed=found.flips_attributed, flips_attributed_ratio=found.flips_attributed_ratio,
                  offline=found.offline, changes=change_counts(found))

    ablations = []
    strongest = max((row for row in found.principles if row.tasks), key=lambda row: row.net or 0, default=None)
    if strongest is not None:
        mark = time.perf_counter()
        ablation = await ablate_run(run_dir, principle=strongest.principle)
        ablations.append(ablation)
        report.update(ablation_principle=strongest.principle, ablation_association_net=strongest.net,
                      ablation_revisions=len(ablation.revisions), ablation_table_revisions=strongest.revisions,
                      ablation_skipped=len(ablation.skipped), ablation_tasks=ablation.tasks,
                      ablation_full_sr=ablation.full_sr, ablation_ablated_sr=ablation.ablated_sr,
                      ablation_paired_diff=ablation.paired_diff, ablation_ci95=ablation.ci95,
                      ablation_mcnemar_p=ablation.mcnemar_p, ablation_s=round(time.perf_counter() - mark, 1))
    for principle in dict.fromkeys(p for p in args.ablate or [] if p != report.get("ablation_principle")):
        mark = time.perf_counter()
        ablation = await ablate_run(run_dir, principle=principle)
        ablations.append(ablation)
        report.setdefault("also_ablated", []).append({
            "principle": principle, "revisions": len(ablation.revisions), "tasks": ablation.tasks,
            "full_sr": ablation.full_sr, "ablated_sr": ablation.ablated_sr, "paired_diff": ablation.paired_diff,
            "ci95": ablation.ci95, "mcnemar_p": ablation.mcnemar_p, "gained": ablation.ablated_only,
            "lost": ablation.full_only, "s": round(time.perf_counter() - mark, 1)})
    if args.markdown:
        print_tables(run_dir, found, ablations)
    report["load_avg_1m_end"] = round(os.getloadavg()[0], 2)
    ratio = report.get("flips_attributed_ratio")
    report["targets"] = TARGETS
    report["met"] = {"flips_attributed_ratio": ratio is not None and ratio >= TARGETS["flips_attributed_ratio"]}
    return report


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--run", help="A finished run folder to read (default: make the bundled offline run).")
    parser.add_argument("--out", help="Where the bundled offline run goes (default: a temp folder).")
    parser.add_argument("--rounds", type=int, default=2, help="Revision rounds after v0 (make run's 2).")
    parser.add_argument("--ablate", action="append", metavar="PRINCIPLE", help="Ablate this principle too (repeatable).")
    parser.add_argument("--markdown", action="store_true", help="Print the tables as Markdown before the JSON line.")
    print(json.dumps(asyncio.run(main(parser.parse_args()))))
