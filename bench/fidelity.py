"""Do two Chromium binaries show an agent the same pixels? Every reference solution, step by step.

    .venv/bin/python bench/fidelity.py [--apps bundled,gpt5] [--binaries FULL,SHELL] [--out DIR] [--only APP]

For every task with a reference solution of the bundled apps and of the GPT-5 apps of AUI-Gym
(`../shared/data/gpt5-apps`, tasks from `configs/gpt5-tasks.yaml`): load the app with a seed and the
fixed clock (`open_app(seed=0, fixed_clock=True)`), let it settle and take the screenshot an agent
would get at load, then replay the solution one step at a time, settling and taking a screenshot
after each (`cua.capture_png`, the rollouts' own capture). Each binary runs this twice, interleaved
(A, B, A′, B′): what one binary does not repeat — apps that draw at random or by the wall clock — is
noise, not a difference between binaries.

A screenshot where A = A′ and B = B′ but A ≠ B is a **binary difference**. It is explained if no
colour channel of any pixel differs by more than the tolerance of `bench/fidelity_known.json` (levels
of 255 no viewer can see), or if the list there names it (app, task and step where they matter, the
box it falls in) with the reason it is harmless. The last line says which differences were found,
which none explains (`unexplained` must be empty) and which listed ones no longer occur (`stale`:
the list is kept honest both ways).

Last line: one JSON object with tasks, screenshots, identical, binary_differences, within_tolerance, noisy,
unexplained, stale.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from apps_prompts import BUNDLED_DIR, load_apps, load_tasks_file, reference_html_path
from cua import BrowserConfig, capture_png, close_browser, open_app, settle
from verifier import replay_solution

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data"
KNOWN = Path(__file__).with_name("fidelity_known.json")


def log(message: str) -> None:
    print(f"[bench/fidelity] {message}", file=sys.stderr, flush=True)


@dataclass
class Case:
    """One task's reference solution on one app's page."""

    app: str
    task: str
    html: str
    solution: list


@dataclass
class Difference:
    """How two screenshots differ: pixels that differ, the box around them (x0, y0, x1, y1), and the largest
    difference of one colour channel (0–255; -1 pixels: one side has no screenshot or another size)."""

    pixels: int
    box: tuple[int, int, int, int] | None
    max_delta: int = 0


@dataclass
class Compared:
    app: str
    task: str
    step: int  # 0: at load; k: after solution step k
    a_vs_b: Difference
    a_vs_a2: Difference
    b_vs_b2: Difference

    @property
    def kind(self) -> str:
        """identical; noisy (a binary did not repeat its own screenshot: the page draws by the clock or at
        random); binary (each binary repeated itself, and they differ)."""
        if self.a_vs_b.pixels == 0:
            return "identical"
        if self.a_vs_a2.pixels or self.b_vs_b2.pixels:
            return "noisy"
        return "binary"


def cases(which: set[str], only: str | None = None) -> list[Case]:
    """Every task with a reference solution of the chosen app sets."""
    found: list[Case] = []
    if "bundled" in which:
        for spec in load_apps(BUNDLED_DIR).apps:
            html = Path(reference_html_path(spec)).read_text(encoding="utf-8")
            found += [Case(spec.id, t.id, html, list(t.solution)) for t in spec.tasks if t.solution]
    if "gpt5" in which:
        gpt5 = SHARED / "gpt5-apps"
        for page in sorted(gpt5.glob("*/index.html")):
            tasks = load_tasks_file(ROOT / "configs" / "gpt5-tasks.yaml", page.parent.name)
            html = page.read_text(encoding="utf-8")
            found += [Case(page.parent.name, t.id, html, list(t.solution)) for t in tasks if t.solution]
    return [case for case in found if only is None or case.app == only]


async def screenshots(case: Case, binary: str) -> list[bytes | None]:
    """The screenshot at load and after every step of the solution (None after a step that failed)."""
    shots: list[bytes | None] = []
    config = BrowserConfig(executable_path=binary)
    async with open_app(case.html, config, seed=0, fixed_clock=True) as app:
        await settle(app.page)
        shots.append(await capture_png(app.page))
        for step in case.solution:
            failed = await replay_solution(app.page, [step])  # the step, then the page settles
            shots.append(None if failed is not None else await capture_png(app.page))
    return shots


def difference(first: bytes | None, second: bytes | None) -> Difference:
    from PIL import Image, ImageChops

    if first is None or second is None:
        return Difference(0 if first is second else -1, None)
    if first == second:
        return Difference(0, None)
    a, b = Image.open(io.BytesIO(first)).convert("RGB"), Image.open(io.BytesIO(second)).convert("RGB")
    if a.size != b.size:
        return Difference(-1, None)
    channels = ImageChops.difference(a, b)
    max_delta = max(high for _low, high in channels.getextrema())
    red, green, blue = channels.split()
    diff = ImageChops.lighter(ImageChops.lighter(red, green), blue).point(lambda v: 255 if v else 0)
    box = diff.getbbox()
    pixels = diff.histogram()[255]
    return Difference(pixels, tuple(box) if box else None, max_delta)


async def compare(case: Case, first: str, second: str) -> list[Compared]:
    """Each binary twice, interleaved (a, b, a′, b′), so that the machine's state is alike for both."""
    a = await screenshots(case, first)
    b = await screenshots(case, second)
    a2 = await screenshots(case, first)
    b2 = await screenshots(case, second)
    return [Compared(case.app, case.task, step, difference(x, y), difference(x, x2), difference(y, y2))
            for step, (x, y, x2, y2) in enumerate(zip(a, b, a2, b2))]


def known_differences() -> tuple[int, list[dict]]:
    """The tolerance (the largest difference of a colour channel no one can see) and the listed differences."""
    if not KNOWN.is_file():
        return 0, []
    known = json.loads(KNOWN.read_text(encoding="utf-8"))
    return int(known["tolerance"]["max_delta"]), known["differences"]


def explained(compared: Compared, known: list[dict]) -> dict | None:
    """The listed entry that explains a binary difference: same app (task and step if the entry names
    them) and the differing pixels inside its box."""
    box = compared.a_vs_b.box
    for entry in known:
        if entry["app"] != compared.app:
            continue
        if entry.get("task") not in (None, compared.task) or entry.get("step") not in (None, compared.step):
            continue
        x0, y0, x1, y1 = entry["box"]
        if box is not None and box[0] >= x0 and box[1] >= y0 and box[2] <= x1 and box[3] <= y1:
            return entry
    return None


async def run(which: set[str], first: str, second: str, only: str | None = None) -> dict:
    found = cases(which, only)
    log(f"{len(found)} tasks with reference solutions; {first} (twice) vs {second}")
    tolerance, known = known_differences()
    compared: list[Compared] = []
    started = time.perf_counter()
    try:
        for number, case in enumerate(found, start=1):
            compared += await compare(case, first, second)
            if number % 10 == 0:
                log(f"{number}/{len(found)} tasks, {time.perf_counter() - started:.0f} s")
    finally:
        await close_browser()
    binary = [c for c in compared if c.kind == "binary"]
    noisy = [c for c in compared if c.kind == "noisy"]
    tolerated = [c for c in binary if 0 < c.a_vs_b.max_delta <= tolerance]
    unexplained = [c for c in binary if c not in tolerated and explained(c, known) is None]
    used = {id(explained(c, known)) for c in binary if c not in tolerated}
    scope = {c.app for c in compared}
    stale = [entry for entry in known if entry["app"] in scope and id(entry) not in used]

    def described(c: Compared) -> dict:
        return {"app": c.app, "task": c.task, "step": c.step, "pixels": c.a_vs_b.pixels, "box": c.a_vs_b.box,
                "max_delta": c.a_vs_b.max_delta, "noise_pixels": [c.a_vs_a2.pixels, c.b_vs_b2.pixels]}

    return {
        "binaries": [first, second], "tasks": len(found), "apps": len(scope), "screenshots": len(compared),
        "identical": sum(c.kind == "identical" for c in compared),
        "binary_differences": [described(c) for c in binary],
        "tolerance_max_delta": tolerance, "within_tolerance": len(tolerated),
        "noisy": [described(c) for c in noisy],
        "unexplained": [described(c) for c in unexplained],
        "stale": stale, "wall_s": round(time.perf_counter() - started, 1),
        "load_average": round(os.getloadavg()[0], 2),
    }


if __name__ == "__main__":
    from cua import FULL_CHROMIUM, HEADLESS_SHELL

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--apps", default="bundled,gpt5", help="bundled, gpt5 or both")
    parser.add_argument("--binaries", default=f"{FULL_CHROMIUM},{HEADLESS_SHELL}")
    parser.add_argument("--only", help="one app id")
    args = parser.parse_args()
    first_binary, second_binary = args.binaries.split(",")
    print(json.dumps(asyncio.run(run(set(args.apps.split(",")), first_binary, second_binary, args.only))))
