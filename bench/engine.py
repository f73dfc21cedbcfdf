"""What one rollout's browser work costs, per Chromium binary: cycles of {open the app, click, screenshot, close}.

    .venv/bin/python bench/engine.py [--cycles 40] [--binaries /usr/bin/chromium,/usr/bin/chromium-headless-shell]

For each binary in turn (same process, back to back, so the machine's load is shared alike): launch
the browser through the project's own `cua` (its flags, its containment, its init scripts), warm it
up with two cycles, then run `--cycles` cycles over the bundled apps' reference pages, each one
`open_app` (a fresh context, the app loaded, the document complete), a settle, a click at the
middle of the page, a settle, a screenshot, then the context closed — a rollout of one step without a
model. The CPU of the whole process tree (Python, the Playwright driver, Chromium with its renderers,
including exited ones) and the wall time are measured over the cycles; also how many renderer
processes one open context holds.

Last line: one JSON object with, per binary, `cpu_s`, `wall_s`, `cpu_s_per_cycle`, `renderers_per_context`,
and `cpu_ratio` (first binary's CPU over each other's).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from scale import TreeSampler  # noqa: E402  (the same process-tree sampler)

from apps_prompts import BUNDLED_DIR, load_apps, reference_html_path
from cua import BrowserConfig, capture_png, close_browser, open_app, settle


def log(message: str) -> None:
    print(f"[bench/engine] {message}", file=sys.stderr, flush=True)


def bundled_pages() -> list[str]:
    return [Path(reference_html_path(spec)).read_text(encoding="utf-8") for spec in load_apps(BUNDLED_DIR).apps]


async def one_cycle(html: str, config) -> None:
    async with open_app(html, config, seed=0, fixed_clock=True) as app:
        await settle(app.page)
        viewport = config.viewport
        await app.page.mouse.click(viewport.width // 2, viewport.height // 2)
        await settle(app.page)
        await capture_png(app.page)


def renderers(sampler: TreeSampler) -> int:
    return sum(1 for p in sampler.processes() if sampler.kind(p) == "chromium renderers")


async def measure(binary: str, pages: list[str], cycles: int, reuse_pages: bool = False) -> dict:
    config = BrowserConfig(executable_path=binary, reuse_pages=reuse_pages)
    for html in pages[:2]:  # warm-up: launch, imports, the first contexts
        await one_cycle(html, config)
    sampler = TreeSampler(set())
    async with open_app(pages[0], config):
        open_renderers = renderers(sampler)
    idle_renderers = renderers(sampler)
    by_kind_before, started = sampler.cpu_by_kind(), time.perf_counter()
    for number in range(cycles):
        await one_cycle(pages[number % len(pages)], config)
    wall = time.perf_counter() - started
    by_kind = {kind: round(seconds - by_kind_before.get(kind, 0.0), 2) for kind, seconds in sampler.cpu_by_kind().items()}
    cpu = sum(by_kind.values())
    await close_browser()
    return {"cpu_s": round(cpu, 2), "wall_s": round(wall, 2), "cpu_s_per_cycle": round(cpu / cycles, 3),
            "cpu_s_by_process": {k: v for k, v in sorted(by_kind.items(), key=lambda kv: -kv[1]) if v},
            "renderers_per_context": open_renderers - idle_renderers, "renderers_open_context": open_renderers}


async def main(args: argparse.Namespace) -> dict:
    import flows  # noqa: F401  (the project's environment)

    pages = bundled_pages()
    result: dict = {"cycles": args.cycles, "apps": len(pages), "cpus": os.cpu_count(),
                    "load_average_at_start": round(os.getloadavg()[0], 2), "binaries": {}}
    for binary in args.binaries.split(","):
        log(f"{binary}: {args.cycles} cycles …")
        result["binaries"][binary] = figures = await measure(binary, pages, args.cycles)
        log(f"{binary}: {json.dumps(figures)}")
    if args.warm:  # the default binary again, its pages reused across apps (BrowserConfig.reuse_pages)
        binary = args.binaries.split(",")[-1]
        result["warm_pages"] = figures = await measure(binary, pages, args.cycles, reuse_pages=True)
        fresh = result["binaries"][binary]["cpu_s"]
        figures["cpu_ratio_fresh_over_warm"] = round(fresh / figures["cpu_s"], 2) if figures["cpu_s"] else None
        log(f"{binary}, warm pages: {json.dumps(figures)}")
    first = next(iter(result["binaries"].values()))
    for figures in result["binaries"].values():
        figures["cpu_ratio"] = round(first["cpu_s"] / figures["cpu_s"], 2) if figures["cpu_s"] else None
    result["load_average_at_end"] = round(os.getloadavg()[0], 2)
    return result


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cycles", type=int, default=40)
    parser.add_argument("--binaries", default="/usr/bin/chromium,/usr/bin/chromium-headless-shell")
    parser.add_argument("--warm", action="store_true", help="also the last binary with warm pages reused across apps")
    print(json.dumps(asyncio.run(main(parser.parse_args()))))
