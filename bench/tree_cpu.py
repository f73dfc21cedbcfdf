"""Where a running process tree's CPU goes, by kind of process, over a window.

    .venv/bin/python bench/tree_cpu.py PID [--window 60]

For a long benchmark (`bench/aui_gym_round.py`) that is already running: give it the benchmark's
pid. The kinds are `bench/scale.py`'s (`TreeSampler.kind`); renderers that exit during the window
count through their Chromium parent's waited-for children; a process the benchmark spawned
(the latency model server, the dashboard drawing process) counts as "dashboard drawing process".
One JSON line: cores busy per kind and in all (CPU seconds / wall seconds), and the load average.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from scale import TreeSampler, cores_between  # noqa: E402

parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
parser.add_argument("pid", type=int)
parser.add_argument("--window", type=float, default=60.0, help="Seconds to measure over.")
args = parser.parse_args()
sampler = TreeSampler(set(), root_pid=args.pid)
before, started = sampler.cpu_by_kind(), time.perf_counter()
time.sleep(args.window)
after, wall = sampler.cpu_by_kind(), time.perf_counter() - started
cores = cores_between(before, after, wall)
print(json.dumps({"pid": args.pid, "window_s": round(wall, 1), "cores_busy_by_process": cores,
                  "cores_busy": round(sum(cores.values()), 2), "load_average": round(os.getloadavg()[0], 2)}))
