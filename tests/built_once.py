"""A costly folder made once per test run, however many test processes (pytest-xdist) ask for it."""

from __future__ import annotations

import fcntl
import os
import shutil
from collections.abc import Awaitable, Callable
from pathlib import Path


async def built_once(tmp_path_factory, name: str, build: Callable[[Path], Awaitable[None]]) -> Path:
    """`name`, a folder `await build(folder)` fills, built once per test run and copied into this test
    process's own temp folder. Under pytest-xdist each process has its own session fixtures, so a session's
    costly run would otherwise be made once per process; the first builds it under a lock in the folder
    the processes share, the others copy it (each keeps its own copy: a test may write to it)."""
    own = tmp_path_factory.mktemp(name)
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        await build(own)
        return own
    shared_root = tmp_path_factory.getbasetemp().parent  # pytest-of-<user>/pytest-N: one per test run
    shared = shared_root / f"built-once-{name}"
    with (shared_root / f"built-once-{name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # blocks this process only while the other builds
        if not (shared / ".built").exists():
            shutil.rmtree(shared, ignore_errors=True)
            shared.mkdir()
            await build(shared)
            (shared / ".built").touch()
    shutil.copytree(shared, own, dirs_exist_ok=True, ignore=shutil.ignore_patterns(".built"))
    return own
