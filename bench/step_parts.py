"""What one agent step's observation costs, part by part, on the bundled apps: is a round trip worth saving?

    .venv/bin/python bench/step_parts.py [--repeats 30]

Issue 28 asks for "the checker and the page read in one round trip where they can be" and "no
re-capture when nothing on screen changed". This measures what either could save. For each bundled
app's reference page, loaded once through the project's own `cua` (its flags, its isolated world),
each of these runs `--repeats` times on the still page, and the medians are taken per app:

- `round_trip_ms`: a call in the harness's isolated world that does nothing (`() => 0`): what merging
  two calls into one saves at most;
- `page_read_ms`: the heuristic's page read (`read_page`: `_read_page.js`);
- `checker_ms`: the app's first reference checker in a new world (`verifier.run_checker`, as a step does);
- `screenshot_ms`: the step's capture (`cua.capture_png`).

Last line: one JSON object with the median over apps of each, and `merge_saves_ratio` = round trip /
(page read + checker): the share of those two calls one merged call could save.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import time
from pathlib import Path

from apps_prompts import BUNDLED_DIR, load_apps, reference_html_path
from cua import BrowserConfig, capture_png, close_browser, default_chromium, isolated_world, open_app, settle
from cua.policies.heuristic import read_page
from verifier import run_checker


def log(message: str) -> None:
    print(f"[bench/step_parts] {message}", file=sys.stderr, flush=True)


async def timed(call, repeats: int) -> float:
    """Median ms of `repeats` awaited calls of `call()` (one warm-up first)."""
    await call()
    samples = []
    for _ in range(repeats):
        started = time.perf_counter()
        await call()
        samples.append((time.perf_counter() - started) * 1000)
    return statistics.median(samples)


async def main(repeats: int) -> dict:
    per_app: dict[str, dict[str, float]] = {}
    try:
        for spec in load_apps(BUNDLED_DIR).apps:
            html = Path(reference_html_path(spec)).read_text(encoding="utf-8")
            checker = next((task.checker for task in spec.tasks if task.checker), None)
            async with open_app(html, BrowserConfig()) as app:
                page = app.page
                await settle(page)
                world = isolated_world(page)
                figures = {
                    "round_trip_ms": await timed(lambda: world.call("() => 0"), repeats),
                    "page_read_ms": await timed(lambda: read_page(page), repeats),
                    "screenshot_ms": await timed(lambda: capture_png(page), repeats),
                }
                if checker:
                    figures["checker_ms"] = await timed(lambda: run_checker(page, checker), repeats)
            per_app[spec.id] = {k: round(v, 2) for k, v in figures.items()}
            log(f"{spec.id}: {per_app[spec.id]}")
    finally:
        await close_browser()

    def median_of(key: str) -> float:
        return round(statistics.median(f[key] for f in per_app.values() if key in f), 2)

    result = {key: median_of(key) for key in ("round_trip_ms", "page_read_ms", "checker_ms", "screenshot_ms")}
    result["merge_saves_ratio"] = round(result["round_trip_ms"] / (result["page_read_ms"] + result["checker_ms"]), 3)
    result.update({"apps": len(per_app), "repeats": repeats, "chromium": default_chromium(),
                   "load_1min": round(os.getloadavg()[0], 2)})
    return result


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=30)
    print(json.dumps(asyncio.run(main(parser.parse_args().repeats))), flush=True)
