"""What a process that called `watch_this_process` started ends when it is killed (`flows._orphans`).

Real processes: a parent interpreter starts children, prints their pids, and is killed with SIGKILL
by the test. (The whole `aui run` killed mid-rollout: tests/reliability/test_killed_run.py.)
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import psutil

from flows._orphans import GRACE_S

ROOT = Path(__file__).resolve().parents[2]
GONE_WITHIN_S = 15.0

# Ignores SIGTERM (as multiprocessing's resource tracker does) and starts a grandchild whose environment is
# its own (as Chromium's helpers rewrite theirs): the watcher must still end both.
STUBBORN_CHILD = """
import signal, subprocess, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
grandchild = subprocess.Popen(["sleep", "600"], env={})
print(grandchild.pid, flush=True)
time.sleep(600)
"""


def _parent(code: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", textwrap.dedent(code)], cwd=ROOT, stdout=subprocess.PIPE,
                            text=True, start_new_session=True)


def _alive(pids: list[int]) -> list[int]:
    alive = []
    for pid in pids:
        try:
            if psutil.Process(pid).status() != psutil.STATUS_ZOMBIE:
                alive.append(pid)
        except psutil.NoSuchProcess:
            continue
    return alive


def _wait_until_gone(pids: list[int], killed_at: float, seconds: float) -> float:
    """Seconds from `killed_at` until none of `pids` is alive."""
    while _alive(pids):
        assert time.monotonic() - killed_at < seconds, f"left {seconds:.0f} s after the kill: {_alive(pids)}"
        time.sleep(0.05)
    return time.monotonic() - killed_at


def test_a_killed_process_takes_what_it_started_with_it_and_nothing_else():
    bystander = subprocess.Popen(["sleep", "600"])  # started by the test, not by the killed process
    parent = _parent(f"""
        import subprocess, sys, time
        from flows import watch_this_process
        watch_this_process()
        child = subprocess.Popen([sys.executable, "-c", {STUBBORN_CHILD!r}], stdout=subprocess.PIPE, text=True)
        print(child.pid, child.stdout.readline().strip(), flush=True)
        time.sleep(600)
    """)
    started: list[int] = []
    try:
        started += [int(pid) for pid in parent.stdout.readline().split()]  # the child, the grandchild
        started += [p.pid for p in psutil.Process(parent.pid).children() if "_orphans.py" in " ".join(p.cmdline())]
        assert len(started) == 3, started
        killed_at = time.monotonic()  # before the kill: `took` can only be longer than what it measures
        parent.send_signal(signal.SIGKILL)
        parent.wait()
        took = _wait_until_gone(started, killed_at, GONE_WITHIN_S)
        # The child ignored SIGTERM: it was killed once the grace had passed, not before.
        assert took >= GRACE_S, took
        assert _alive([bystander.pid]) == [bystander.pid]
    finally:
        bystander.kill()
        bystander.wait()
        parent.kill()
        for pid in _alive(started):  # a failed test leaves nothing behind either
            os.kill(pid, signal.SIGKILL)


def test_the_drawing_process_ends_with_whatever_made_it_even_without_a_watcher():
    """The dashboard drawing pool's initializer: its process (and multiprocessing's resource tracker) end when
    their parent is killed, as in a notebook that ran a sweep."""
    parent = _parent("""
        import multiprocessing, os, time
        from concurrent.futures import ProcessPoolExecutor
        from flows._orphans import end_with_parent
        pool = ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn"),
                                   initializer=end_with_parent, initargs=(os.getpid(),))
        print(pool.submit(os.getpid).result(), flush=True)
        time.sleep(600)
    """)
    started: list[int] = []
    try:
        worker = int(parent.stdout.readline())
        started += [p.pid for p in psutil.Process(parent.pid).children()]
        assert worker in started and len(started) == 2, started  # the worker and the resource tracker
        killed_at = time.monotonic()
        parent.send_signal(signal.SIGKILL)
        parent.wait()
        _wait_until_gone(started, killed_at, GONE_WITHIN_S)
    finally:
        parent.kill()
        for pid in _alive(started):
            os.kill(pid, signal.SIGKILL)


def test_a_hard_stop_spares_the_watcher_which_then_ends_what_the_stop_missed():
    """`run_stoppable` kills its process tree when a stop takes longer than its grace: not the watcher, which
    then ends a process the kill could not find (started by a process that has ended, so no descendant)."""
    parent = _parent("""
        import asyncio, os, signal, subprocess, sys, threading
        from flows import SignalListener, run_stoppable, watch_this_process
        watch_this_process()
        daemon = ("import subprocess; print(subprocess.Popen(['sleep', '600'], stdout=subprocess.DEVNULL, "
                  "stderr=subprocess.DEVNULL).pid)")
        left = subprocess.run([sys.executable, "-c", daemon], capture_output=True, text=True).stdout
        print(left.strip(), flush=True)

        async def will_not_stop():
            while True:
                try:
                    await asyncio.sleep(10)
                except asyncio.CancelledError:
                    pass

        threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGTERM)).start()
        with SignalListener() as listener:
            run_stoppable(will_not_stop, listener, grace_s=0.5)
    """)
    started: list[int] = []
    try:
        started.append(int(parent.stdout.readline()))
        assert psutil.Process(started[0]).ppid() != parent.pid
        assert parent.wait(timeout=120) == 143
        _wait_until_gone(started, time.monotonic(), GONE_WITHIN_S)
    finally:
        parent.kill()
        for pid in _alive(started):
            os.kill(pid, signal.SIGKILL)
