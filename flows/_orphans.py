"""Every process an `aui` command starts ends when the command ends, however it ends (a `kill -9` too).

A run starts processes it does not control: Prefect's temporary API server (a `uvicorn`
subprocess), multiprocessing's resource tracker (started with the spawn context of the dashboard
drawing process), the drawing process itself, the Playwright driver and its Chromium. A process
killed with SIGKILL runs no handler and no `atexit`, so none of them is told. The driver and
Chromium end anyway (the driver at the end of its stdin, Chromium when the driver's pipe closes);
the server, the tracker and the drawing process (blocked for good in `Queue.get` on a pipe it
holds both ends of) were left re-parented to init, one set per killed run (issue 38 §7).

So the `aui` entry point, before anything else starts, calls `watch_this_process`, which

1. writes an id of its own into the environment (`AUI_PROCESS_TREE`, after an outer command's
   id if there is one), inherited by every process the command starts and every process those
   start; and
2. starts a watcher: this file run as a script (standard library only, `python -I -S`), in a
   session of its own (neither a Ctrl-C nor a terminal's hang-up reaches it), that asks every
   `POLL_S` whether `aui` is still its parent. Once it is not — `aui` ended, however — it takes
   every live process whose environment holds the id, and every process below one of those
   (Chromium may rewrite its environment block with its process titles), sends them SIGTERM,
   gives them `GRACE_S` (uvicorn closes its database; the resource tracker, which ignores SIGTERM,
   unlinks the semaphores left behind once the others are gone and exits), SIGKILLs whatever is
   left and ends. After a normal exit nothing is left (Prefect stops its server at exit), and the
   watcher ends within a poll. A hard stop (`_stop`) kills the command's tree but spares the
   watcher, which then ends what that kill missed.

What it cannot find: a process started with an environment of its own (not the command's) whose
parent had ended before the watcher looked. None of the processes above is one.

Why not the alternatives: a parent-death signal (`PR_SET_PDEATHSIG`) fires when the *thread* that
started the child ends, and Prefect and multiprocessing start theirs from whatever thread needs
them (the run's worker thread, the event loop); a process group of the run's own would take `aui`
out of the terminal's foreground group (Ctrl-C would no longer reach it), and its shell's group is
shared with `make`; a pipe the watcher reads to its end stays open in any child forked without exec.
Asking for the parent's id is none of these, costs a system call per poll, and the watcher
cannot outlive `aui` by more than a poll and the grace.

The dashboard drawing process also watches its own parent the same way (`end_with_parent`, its
pool's initializer), so it ends with whatever process made it even when no `aui` command did (a
notebook calling `flows.sweep`); the resource tracker then ends on its own.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import time

TREE_VARIABLE = "AUI_PROCESS_TREE"
"""Space-separated ids of the `aui` commands whose process trees this process belongs to."""
POLL_S = 0.25
"""How often a watcher asks whether its parent is still there."""
GRACE_S = 3.0
"""How long the processes a dead command left get after SIGTERM before SIGKILL."""
_PROC = "/proc"
_watcher: int | None = None


def watcher_pid() -> int | None:
    """The pid of this process's watcher, if `watch_this_process` started one."""
    return _watcher


def watch_this_process() -> None:
    """Mark this process's environment (inherited by everything it starts from now on) and start the
    watcher that ends every marked process once this one has ended."""
    global _watcher
    run_id = os.urandom(16).hex()
    outer = os.environ.get(TREE_VARIABLE)
    os.environ[TREE_VARIABLE] = f"{outer} {run_id}" if outer else run_id
    # posix_spawn rather than `subprocess`: nothing to wait for or warn about at exit (the watcher outlives
    # this process, by a poll and the grace), and no module heavier than `os` on the command's start-up path.
    _watcher = os.posix_spawn(sys.executable, [sys.executable, "-I", "-S", os.path.abspath(__file__), str(os.getpid()),
                                               run_id], os.environ, setsid=True,
                              file_actions=[(os.POSIX_SPAWN_OPEN, fd, os.devnull, os.O_RDWR, 0) for fd in (0, 1, 2)])


def end_with_parent(parent: int) -> None:
    """A process pool's initializer: this process exits, at once, when `parent` is no longer its parent.

    It ignores SIGINT: a terminal's Ctrl-C reaches the whole process group, and a KeyboardInterrupt raised in the
    middle of a job came back to the parent as the job's result, ending a stopping run with an error instead of a
    clean stop. The parent decides the stop; this process ends with it."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    threading.Thread(target=_exit_when_orphaned, args=(parent,), name="aui-parent-watch", daemon=True).start()


def end_tree(run_id: str, grace_s: float = GRACE_S) -> list[int]:
    """SIGTERM every live process of the tree `run_id` marks (and every process below one), SIGKILL what is
    still alive after `grace_s`; returns the pids found first."""
    found = _tree(run_id)
    send(found, signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    alive = found
    while alive and time.monotonic() < deadline:
        time.sleep(0.05)
        alive = _tree(run_id)
    for _ in range(20):  # a process may start another while it is being killed: until a look finds none
        if not alive:
            break
        send(alive, signal.SIGKILL)
        time.sleep(0.05)
        alive = _tree(run_id)
    return found


def _wait_while_parent(parent: int) -> None:
    # Re-parented (to init or a sub-reaper) once `parent` has ended; if it ended before this first
    # look, the parent is already another process.
    while os.getppid() == parent:
        time.sleep(POLL_S)


def _exit_when_orphaned(parent: int) -> None:
    _wait_while_parent(parent)
    os._exit(1)


def _tree(run_id: str) -> list[int]:
    """Live pids (not this one) whose environment holds `run_id`, and every live pid below one of them."""
    # The same walk of /proc as `cua._processes`, which this script cannot import (standard library only).
    needle, me = run_id.encode(), os.getpid()
    children: dict[int, list[int]] = {}
    marked = []
    for pid in _pids():
        fields = _stat_fields(pid)
        if pid == me or len(fields) < 2 or fields[0] in (b"Z", b"X"):
            continue
        children.setdefault(int(fields[1]), []).append(pid)
        if needle in _read(pid, "environ"):
            marked.append(pid)
    found, frontier = set(marked), list(marked)
    while frontier:
        for child in children.get(frontier.pop(), []):
            if child not in found:
                found.add(child)
                frontier.append(child)
    return sorted(found)


def send(pids: list[int], signum: int) -> None:
    """`signum` to each of `pids` that is still there (and ours)."""
    for pid in pids:
        with contextlib.suppress(OSError):  # gone already, or not ours
            os.kill(pid, signum)


def _pids() -> list[int]:
    try:
        return [int(name) for name in os.listdir(_PROC) if name.isdigit()]
    except OSError:
        return []


def _read(pid: int, name: str) -> bytes:
    try:
        with open(f"{_PROC}/{pid}/{name}", "rb") as file:
            return file.read()
    except OSError:
        return b""


def _stat_fields(pid: int) -> list[bytes]:
    # The command name (field 2) may hold spaces and parentheses: split after the last ')'.
    stat = _read(pid, "stat")
    return stat.rsplit(b")", 1)[1].split() if b")" in stat else []


def _watch(parent: int, run_id: str) -> None:
    # `aui` handles these signals and stops; the watcher waits for it to be gone, whatever it got.
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, signal.SIG_IGN)
    _wait_while_parent(parent)
    end_tree(run_id)


if __name__ == "__main__":  # the watcher `watch_this_process` starts: PARENT_PID RUN_ID
    _watch(int(sys.argv[1]), sys.argv[2])
