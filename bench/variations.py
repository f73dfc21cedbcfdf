"""Benchmark of app variations (OpenApps' axis) on the bundled apps, offline; prints one JSON object as its last line.

    .venv/bin/python bench/variations.py [--repeats 3] [--variations dark,long,…] [--app ID …] [--out DIR]
                                         [--skip-appearance | --skip-reliability]

1. Reliability: the design loop's round 0 over the bundled apps (heuristic agent, offline verifier;
   the loop's plain stages, no Prefect) in every offline variation, each variant proven first (every
   task with a reference solution replayed on it; a task it breaks is excluded for it), every kept
   task rolled out `--repeats` times. SR per variation over the common tasks (kept by every
   variation), its std and MAD across variations, std within a variation across repeats, failure
   modes per variation, the share of (task, variation) pairs excluded, wall time.
2. Appearance: per app and appearance variation, the share of the screen that changes at load
   (16-px cells differing at all; `hard-font` over the cells that hold text) — its minimum over
   apps and variations; the per-pixel share too, for comparison.
3. Cost: opening a page (context, load, transform, settle) with each variation vs the default,
   interleaved in one loop, median ms; the overhead is the median over variations of the difference.

Why the spread within a variation is 0: the offline heuristic agent is deterministic — repeats differ
only where an app draws random numbers (each repeat seeds Math.random differently) or timing decides
what the page shows; so any spread across variations is flagged as a reliability gap.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

from apps_prompts import BUNDLED_DIR, load_apps, reference_html_path
from cua import BrowserConfig, capture_png, close_browser, open_app, settle
from experiment import make_config
from flows import sweep_without_prefect
from perturb import VARIATIONS, changed_share, offline_variation_names, text_cells, variation_transform
from results import variation_rows

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

LOAD_REPEATS = 3


def log(message: str) -> None:
    print(f"[bench/variations] {message}", file=sys.stderr, flush=True)


async def reliability(args, names: list[str], out: Path) -> tuple[dict, float]:
    fields = {"name": "variations", "rounds": 0, "repeats": args.repeats, "variations": names,
              "out_dir": str(out), "concurrency": 2}
    if args.app:
        fields["app_ids"] = args.app
    config = make_config(fields)
    started = time.perf_counter()
    results = await sweep_without_prefect(config)
    wall = time.perf_counter() - started
    (row,) = variation_rows(results)
    excluded = sum(len(v.excluded) for r in results for v in r.variations)
    pairs = sum(sum(t.checker_valid for t in r.tasks) for r in results) * (len(row.variations) - 1)
    return {"row": row, "excluded": excluded, "pairs": pairs, "apps": len(results)}, wall


async def appearance_and_cost(app_ids: list[str] | None, names: list[str]) -> dict:
    appearance = [name for name in names if name != "default" and all(
        VARIATIONS.get(part).kind == "appearance" for part in name.split("+"))]
    shares: dict[str, list[float]] = {name: [] for name in appearance}
    pixel_shares: dict[str, list[float]] = {name: [] for name in appearance}
    load_ms: dict[str, list[float]] = {name: [] for name in names}
    specs = [s for s in load_apps(BUNDLED_DIR).apps if not app_ids or s.id in app_ids]
    for spec in specs:
        html = reference_html_path(spec).read_text(encoding="utf-8")
        shots = {}
        for _ in range(LOAD_REPEATS):
            for name in names:  # interleaved: the machine's drift is shared by every variation
                transform = variation_transform(name, 0) if name != "default" else None
                started = time.perf_counter()
                async with open_app(html, BrowserConfig(transform=transform), seed=0, fixed_clock=True) as app:
                    await settle(app.page)
                    load_ms[name].append((time.perf_counter() - started) * 1000)
                    if name not in shots and (name == "default" or name in appearance):
                        shots[name] = (await capture_png(app.page), await text_cells(app.page))
        base, base_cells = shots["default"]
        for name in appearance:
            shot, cells = shots[name]
            within = (base_cells | cells) if "hard-font" in name.split("+") else None
            shares[name].append(changed_share(base, shot, within=within))
            pixel_shares[name].append(changed_share(base, shot, cell=1))
    await close_browser()
    medians = {name: statistics.median(values) for name, values in load_ms.items()}
    overheads = [medians[name] - medians["default"] for name in names if name != "default"]
    return {
        "min_pixel_change_appearance": round(min(min(v) for v in shares.values()), 4) if shares else None,
        "pixel_change_min_by_variation": {k: round(min(v), 4) for k, v in shares.items()},
        "per_pixel_change_min_by_variation": {k: round(min(v), 4) for k, v in pixel_shares.items()},
        "load_ms_median": {k: round(v, 1) for k, v in medians.items()},
        "variation_load_overhead_ms": round(statistics.median(overheads), 1) if overheads else 0.0,
    }


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--variations", default=None, help="comma-separated (default: every offline variation)")
    parser.add_argument("--app", action="append", default=None, help="only these bundled apps (repeatable)")
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--skip-reliability", action="store_true", help="only the appearance and cost figures")
    parser.add_argument("--skip-appearance", action="store_true", help="only the reliability figures")
    args = parser.parse_args()

    names = ["default", *[n for n in (args.variations.split(",") if args.variations else offline_variation_names())
                          if n and n != "default"]]
    figures = {} if args.skip_appearance else await appearance_and_cost(args.app, names)
    if figures:
        log(f"appearance: {figures['pixel_change_min_by_variation']}; load overhead {figures['variation_load_overhead_ms']} ms")
    result = {"variations": len(names), "names": names, **figures}
    if not args.skip_reliability:
        out = args.out or Path(tempfile.mkdtemp(prefix="bench-variations-"))
        found, wall = await reliability(args, names, out)
        row = found["row"]
        log(f"{found['apps']} apps × {len(names)} variations × {args.repeats} repeats in {wall:.0f} s; run folder {out}")
        sr = {k: None if v is None else round(v, 4) for k, v in row.sr.items()}
        known = [v for v in row.sr.values() if v is not None]
        result.update({
            "apps": found["apps"], "repeats": args.repeats, "tasks_common": row.tasks_common,
            "tasks_valid": row.tasks_valid, "sr_per_variation": sr,
            "sr_kept_per_variation": {k: None if v is None else round(v, 4) for k, v in row.sr_kept.items()},
            "sr_default": sr["default"], "sr_min": round(min(known), 4), "sr_max": round(max(known), 4),
            "sr_std_across_variations": round(row.std, 4), "sr_mad_across_variations": round(row.mad, 4),
            "sr_std_within_variation": None if row.std_within is None else round(row.std_within, 4),
            "reliability_gap": row.reliability_gap,
            "tasks_excluded": found["excluded"], "task_variation_pairs": found["pairs"],
            "tasks_excluded_ratio": round(found["excluded"] / found["pairs"], 4) if found["pairs"] else 0.0,
            "failure_modes": row.failure_modes, "failed_rollouts": row.failures, "rollouts": row.rollouts,
            "wall_s": round(wall, 1),
            "why_std_within": "the heuristic agent is deterministic: repeats differ only where an app draws random "
                              "numbers or timing decides what the page shows",
        })
    print(json.dumps(result))


if __name__ == "__main__":
    asyncio.run(main())
