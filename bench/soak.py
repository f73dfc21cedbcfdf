"""Soak: many heuristic rollouts back to back on one worker; prints one JSON object as its last line.

    .venv/bin/python bench/soak.py [--rollouts 300] [--max-steps 8] [--keep DIR]

Cycles through the bundled apps' tasks (reference HTML, reference checkers compiled with
`verifier.compile_checker`), one rollout at a time on one browser, as a long-lived worker would.

- rollouts / errors: rollouts run, and how many ended in `error` or `timeout` (or raised).
- rss_mb_first_50 / rss_mb_last_50: mean resident memory (MB) of this process and all its
  descendants (Playwright driver, Chromium and its children), sampled after each rollout of the
  first and of the last 50. RSS counts shared pages once per process: a trend, not an absolute.
- leaked_processes: processes of the worker (Chromium, the driver) still alive after shutdown.
Targets: errors = 0, rss_mb_last_50 <= 1.2 × rss_mb_first_50, leaked_processes = 0.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from apps_prompts import BUNDLED_DIR, load_apps, reference_html_path
from cua import RolloutConfig, TerminationReason, close_browser, rollout
from cua.policies import get_policy
from verifier import compile_checker, rollout_checker

WINDOW = 50
RSS_GROWTH_LIMIT = 1.2
_PAGE_KB = os.sysconf("SC_PAGE_SIZE") // 1024


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


# ---- processes (Linux /proc) ------------------------------------------------------------------


def _stat(pid: int) -> list[str] | None:
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None


def descendants(root: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit() and (fields := _stat(int(entry))):
            children.setdefault(int(fields[1]), []).append(int(entry))
    found, stack = [], [root]
    while stack:
        for child in children.get(stack.pop(), []):
            found.append(child)
            stack.append(child)
    return found


def identity(pid: int) -> tuple[int, str] | None:
    """(pid, start time): a process, not just a number the kernel may hand out again."""
    fields = _stat(pid)
    if not fields or fields[0] in ("Z", "X"):
        return None
    return pid, fields[19]


def rss_mb(pids: list[int]) -> float:
    total_kb = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/statm") as handle:
                total_kb += int(handle.read().split()[1]) * _PAGE_KB
        except (OSError, IndexError, ValueError):
            continue
    return total_kb / 1024


def command(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            return handle.read().replace(b"\0", b" ").decode(errors="replace")[:120]
    except OSError:
        return ""


# ---- the soak ---------------------------------------------------------------------------------


def bundled_jobs() -> list[tuple[str, str, str, str, str]]:
    """(app id, task id, task text, html, checker JS) for every bundled task with a reference checker."""
    jobs = []
    for spec in load_apps(BUNDLED_DIR).raise_for_errors():
        html_path = reference_html_path(spec)
        if html_path is None:
            continue
        html = Path(html_path).read_text(encoding="utf-8")
        for task in spec.tasks:
            if task.checker:
                jobs.append((spec.id, task.id, task.description, html, compile_checker(task.checker).javascript))
    if not jobs:
        raise SystemExit(f"no bundled tasks with checkers under {BUNDLED_DIR}")
    return jobs


async def soak(rollouts: int, max_steps: int, out: Path, keep: bool) -> dict:
    jobs = bundled_jobs()
    config = RolloutConfig(max_steps=max_steps, step_timeout_s=60, episode_timeout_s=240)
    me = os.getpid()
    seen: set[tuple[int, str]] = set()
    samples: list[float] = []
    terminations: Counter[str] = Counter()
    errors: list[str] = []
    started = time.monotonic()
    try:
        for number in range(rollouts):
            app_id, task_id, task, html, checker = jobs[number % len(jobs)]
            folder = out / f"{number:04d}-{app_id}-{task_id}"
            try:
                trajectory = await rollout(html, task, get_policy("heuristic"), rollout_checker(checker), folder, config,
                                           app_id=app_id, task_id=task_id)
                reason = trajectory.termination.value if trajectory.termination else "none"
                if trajectory.termination in (TerminationReason.error, TerminationReason.timeout, None):
                    errors.append(f"{app_id}/{task_id}: {reason}: {trajectory.error}")
            except Exception as exc:  # rollout promises never to raise; count it if it does
                reason = "raised"
                errors.append(f"{app_id}/{task_id}: raised {type(exc).__name__}: {exc}")
            terminations[reason] += 1
            if not keep:
                shutil.rmtree(folder, ignore_errors=True)
            tree = descendants(me)
            seen.update(i for pid in tree if (i := identity(pid)))
            samples.append(rss_mb([me, *tree]))
            if (number + 1) % 10 == 0 or number + 1 == rollouts:
                log(f"{number + 1}/{rollouts}  rss {samples[-1]:.0f} MB  processes {len(tree)}  errors {len(errors)}  "
                    f"{time.monotonic() - started:.0f} s  {dict(terminations)}")
    finally:
        await close_browser()
    leaked = await _leftovers(seen)
    window = min(WINDOW, len(samples))
    first, last = statistics.fmean(samples[:window]), statistics.fmean(samples[-window:])
    return {
        "rollouts": rollouts,
        "errors": len(errors),
        "rss_mb_first_50": round(first, 1),
        "rss_mb_last_50": round(last, 1),
        "leaked_processes": len(leaked),
        "rss_growth": round(last / first, 3) if first else None,
        "terminations": dict(terminations),
        "error_examples": errors[:5],
        "leaked_examples": [f"{pid}: {command(pid)}" for pid, _ in leaked[:5]],
        "tasks": len(jobs),
        "max_steps": max_steps,
        "seconds": round(time.monotonic() - started, 1),
        "load_average": round(os.getloadavg()[0], 2),
        "targets_met": {
            "errors": not errors,
            "rss": bool(first) and last <= RSS_GROWTH_LIMIT * first,
            "leaked_processes": not leaked,
        },
    }


async def _leftovers(seen: set[tuple[int, str]], grace_s: float = 10.0) -> list[tuple[int, str]]:
    """Processes of the worker still alive after shutdown (given a moment to exit)."""
    deadline = time.monotonic() + grace_s
    while True:
        alive = sorted(i for pid, start in seen if (i := identity(pid)) and i[1] == start)
        alive += [i for pid in descendants(os.getpid()) if (i := identity(pid)) and i not in alive]
        if not alive or time.monotonic() >= deadline:
            return alive
        await asyncio.sleep(0.25)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rollouts", type=int, default=300, help="rollouts to run back to back (default 300)")
    parser.add_argument("--max-steps", type=int, default=8, help="step limit per rollout (default 8)")
    parser.add_argument("--keep", metavar="DIR", help="keep every trajectory under DIR (default: a temp folder, removed)")
    args = parser.parse_args()
    if args.rollouts < 1:
        parser.error("--rollouts must be at least 1")
    out = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="aui-soak-"))
    try:
        result = asyncio.run(soak(args.rollouts, args.max_steps, out, keep=bool(args.keep)))
    finally:
        if not args.keep:
            shutil.rmtree(out, ignore_errors=True)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
