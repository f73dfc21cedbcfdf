"""Benchmark of OSUniverse's scoring on the bundled apps, offline; prints one JSON object as its last line.

    .venv/bin/python bench/levels.py [--repeats 3] [--out DIR] [--markdown]

The design loop's round 0 over the bundled apps (heuristic agent, offline verifier; the loop's
plain stages, no Prefect: the scoring does not depend on it), each task rolled out `--repeats`
times with its own seed (the app's Math.random) and its level's step budget. Prints the weighted
score (Σ w·passed / Σ w·n, OSUniverse's weights), SR, SR per level, SR's spread across repeats, and
how many tasks carry an answer check and how many of those the heuristic answered right. `--markdown`
prints, before the JSON line, the run's scoring table as results.md has it (`results.scoring_table`).

Why the spread may be 0: the offline heuristic agent is deterministic — the same page gives the
same actions — so repeats differ only where an app draws random numbers (each repeat seeds
Math.random differently) or where timing decides what the page shows.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path

from apps_prompts import BUNDLED_DIR, load_apps
from experiment import make_config
from flows import sweep_without_prefect
from results import records_markdown, scoring_table, table_rows

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def log(message: str) -> None:
    print(f"[bench/levels] {message}", file=sys.stderr, flush=True)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--markdown", action="store_true", help="Print the scoring table as Markdown before the JSON line.")
    args = parser.parse_args()

    out = args.out or Path(tempfile.mkdtemp(prefix="bench-levels-"))
    config = make_config({"name": "levels", "rounds": 0, "repeats": args.repeats, "out_dir": str(out), "concurrency": 2})
    started = time.perf_counter()
    results = await sweep_without_prefect(config)
    wall = time.perf_counter() - started
    (row,) = table_rows(results, config.weights)
    spread = row.spread
    specs = {spec.id: spec for spec in load_apps(BUNDLED_DIR).apps}
    answer_tasks = {(app_id, t.id) for app_id, spec in specs.items() for t in spec.tasks if t.answer_check}
    answered_right = sum(1 for result in results for _, outcomes in result.every_repeat() for task in outcomes
                         if (result.app_id, task.task_id) in answer_tasks
                         and any(c.kind == "answer" and c.passed for c in task.checks))
    levels = {}
    for spec in specs.values():
        for task in spec.tasks:
            key = task.level.value if task.level else "none"
            levels[key] = levels.get(key, 0) + 1
    if args.markdown:
        print(records_markdown(scoring_table([row])) + "\n", flush=True)
    log(f"{len(results)} apps, {row.tasks['overall']} tasks × {args.repeats} repeats in {wall:.0f} s; run folder {out}")
    print(json.dumps({
        "apps": len(results), "tasks": row.tasks["overall"], "repeats": args.repeats, "tasks_per_level": levels,
        "weighted_score": round(row.weighted["overall"], 4), "sr": round(row.sr["overall"], 4),
        "sr_per_level": {k: None if v is None else round(v, 4) for k, v in row.sr_per_level.items()},
        "sr_per_repeat": [round(v, 4) for v in row.sr_repeats],
        "sr_std_across_repeats": round(spread["sr_std"], 4), "weighted_std_across_repeats": round(spread["weighted_std"], 4),
        "answer_tasks": len(answer_tasks), "answers_right": answered_right,
        "answers_asked": len(answer_tasks) * args.repeats, "wall_s": round(wall, 1),
        "why_std": "the heuristic agent is deterministic: repeats differ only where an app draws random numbers "
                   "(each repeat seeds Math.random differently) or timing decides what the page shows",
    }))


if __name__ == "__main__":
    asyncio.run(main())
