"""The worker's Chromium as operating-system processes: find it, and end it when asking fails.

Playwright does not tell the async client its browser's process id, and a browser that no
longer answers cannot be asked to close. So every launch carries a unique marker switch
(Chromium ignores switches it does not know) by which its main process is found in /proc; its
zygotes, renderers and helpers are that process's descendants. Linux only (as is the worker);
elsewhere the functions find nothing and killing is a no-op.
"""

from __future__ import annotations

import os
import signal
import uuid
from contextlib import suppress
from pathlib import Path

MARKER_SWITCH = "--aui-browser-id"
_PROC = Path("/proc")


def new_marker() -> str:
    """A launch switch that names one browser launch (`--aui-browser-id=<hex>`)."""
    return f"{MARKER_SWITCH}={uuid.uuid4().hex}"


def find_marked(marker: str) -> int | None:
    """The pid of the browser main process launched with `marker`, if it is alive."""
    needle = marker.encode()
    for pid in _pids():
        command = _read(pid, "cmdline")
        if needle in command and b"--type=" not in command and not _is_zombie(pid):
            return pid
    return None


def descendants(root: int) -> list[int]:
    """Pids of every living process below `root` (children first, then theirs)."""
    children: dict[int, list[int]] = {}
    for pid in _pids():
        parent = _parent(pid)
        if parent is not None:
            children.setdefault(parent, []).append(pid)
    found: list[int] = []
    frontier = [root]
    while frontier:
        for child in children.get(frontier.pop(), []):
            found.append(child)
            frontier.append(child)
    return found


def kill_tree(root: int) -> None:
    """SIGKILL `root` and all its descendants."""
    for pid in [*descendants(root), root]:
        with suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)


def _pids() -> list[int]:
    try:
        return [int(name) for name in os.listdir(_PROC) if name.isdigit()]
    except OSError:
        return []


def _read(pid: int, name: str) -> bytes:
    try:
        return (_PROC / str(pid) / name).read_bytes()
    except OSError:
        return b""


def _stat_fields(pid: int) -> list[bytes]:
    # The command name (field 2) may contain spaces and parentheses: split after the last ')'.
    stat = _read(pid, "stat")
    return stat.rsplit(b")", 1)[1].split() if b")" in stat else []


def _parent(pid: int) -> int | None:
    fields = _stat_fields(pid)
    return int(fields[1]) if len(fields) > 1 else None


def _is_zombie(pid: int) -> bool:
    fields = _stat_fields(pid)
    return bool(fields) and fields[0] in (b"Z", b"X")
