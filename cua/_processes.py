"""The worker's Chromium as operating-system processes: find it, and end it when asking fails.

Playwright does not tell the async client its browser's process id, and a browser that no
longer answers cannot be asked to close. So every launch carries a unique marker switch
(Chromium ignores switches it does not know) by which its main process is found among the
machine's processes (psutil); its zygotes, renderers and helpers are that process's descendants.
"""

from __future__ import annotations

import os
import signal
import uuid
from contextlib import suppress

import psutil

MARKER_SWITCH = "--aui-browser-id"


def new_marker() -> str:
    """A launch switch that names one browser launch (`--aui-browser-id=<hex>`)."""
    return f"{MARKER_SWITCH}={uuid.uuid4().hex}"


def find_marked(marker: str) -> int | None:
    """The pid of the browser main process launched with `marker`, if it is alive."""
    for process in psutil.process_iter(["cmdline", "status"]):
        arguments = process.info["cmdline"] or []
        if (any(marker in argument for argument in arguments) and not any("--type=" in a for a in arguments)
                and process.info["status"] not in (psutil.STATUS_ZOMBIE, psutil.STATUS_DEAD)):
            return process.pid
    return None


def descendants(root: int) -> list[int]:
    """Pids of every living process below `root` (children first, then theirs)."""
    try:
        return [child.pid for child in psutil.Process(root).children(recursive=True)]
    except psutil.Error:  # `root` is gone
        return []


def kill_tree(root: int) -> int:
    """SIGKILL `root` and all its descendants; returns how many signals were delivered."""
    delivered = 0
    for pid in [*descendants(root), root]:
        with suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
            delivered += 1
    return delivered
