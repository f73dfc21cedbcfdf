"""Benchmark of the run viewer: full page loads in Chromium; prints one JSON object as its last line.

    .venv/bin/python bench/viewer_load.py [--loads 15]

A synthetic finished run (`viewer.testing.synthetic_run`: 12 apps × 3 rounds × 8 tasks, every
trajectory 20 steps with real 1280×720 screenshots) is served by `aui view`'s app (uvicorn on
127.0.0.1, in this process's thread). Chromium (Playwright) loads

- the runs page (`runs_page_ms`, target ≤ 300 ms) and
- a 20-step trajectory page (`trajectory_page_ms`, target ≤ 100 ms), also with a fresh browser
  cache each time (`trajectory_page_cold_ms`: the screenshots come over the wire),

each `--loads` times after one warm-up, timed from `page.goto` to the `load` event (HTML, CSS, the
script, the step's two screenshots, the script's first drawing). Medians are reported; the run page
and the app page are measured too.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import socket
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from urllib.parse import quote

import uvicorn
from playwright.async_api import async_playwright

from cua import BrowserConfig
from viewer import create_app, load_run
from viewer.testing import synthetic_run


def log(message: str) -> None:
    print(f"[bench/viewer_load] {message}", file=sys.stderr, flush=True)


def serve(roots: list[Path]):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(create_app(roots, who="bench"), host="127.0.0.1", port=port,
                                           log_level="warning", access_log=False))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.05)
    return server, thread, f"http://127.0.0.1:{port}"


async def timed_loads(browser, url: str, loads: int, cold: bool = False) -> list[float]:
    times = []
    context = await browser.new_context(viewport={"width": 1400, "height": 900})
    page = await context.new_page()
    await page.goto(url, wait_until="load")  # warm-up: the server's first read of the run, the browser's first parse
    for _ in range(loads):
        if cold:
            await context.close()
            context = await browser.new_context(viewport={"width": 1400, "height": 900})
            page = await context.new_page()
        started = time.perf_counter()
        response = await page.goto(url, wait_until="load")
        times.append((time.perf_counter() - started) * 1000)
        assert response is not None and response.status == 200, (url, response and response.status)
    await context.close()
    return times


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--loads", type=int, default=15)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="bench-viewer-") as folder:
        started = time.perf_counter()
        run_dir = synthetic_run(Path(folder), apps=12, rounds=3, tasks=8, steps=20)
        log(f"synthetic run: {time.perf_counter() - started:.1f} s")
        run = load_run(run_dir)
        trajectory = run.trajectories[len(run.trajectories) // 2].trajectory_id
        server, thread, base = serve([Path(folder)])
        try:
            async with async_playwright() as playwright:
                browser = await playwright.chromium.launch(executable_path=BrowserConfig().executable_path,
                                                           args=["--no-sandbox", "--disable-gpu"])
                pages = {
                    "runs_page_ms": (f"{base}/", False),
                    "run_page_ms": (f"{base}/runs/synthetic", False),
                    "app_page_ms": (f"{base}/runs/synthetic/apps/app-00", False),
                    "trajectory_page_ms": (f"{base}/runs/synthetic/t/{quote(trajectory)}", False),
                    "trajectory_page_cold_ms": (f"{base}/runs/synthetic/t/{quote(trajectory)}", True),
                }
                figures = {}
                for key, (url, cold) in pages.items():
                    times = await timed_loads(browser, url, args.loads, cold=cold)
                    figures[key] = round(statistics.median(times), 1)
                    log(f"{key}: median {figures[key]} ms (min {min(times):.1f}, max {max(times):.1f})")
                await browser.close()
        finally:
            server.should_exit = True
            thread.join(timeout=10)
    print(json.dumps({"apps": 12, "rounds": 3, "trajectories": len(run.trajectories), "steps": 20, "loads": args.loads,
                      **figures, "targets": {"trajectory_page_ms": 100, "runs_page_ms": 300}}))


if __name__ == "__main__":
    asyncio.run(main())
