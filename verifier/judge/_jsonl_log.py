"""Append-only JSON-lines logs that survive crashes and concurrent writers, and a tolerant reader.

A writer appends each record as one whole line in one `os.write` on an O_APPEND descriptor while
holding an exclusive `fcntl.flock` on the file, then fsyncs before letting go. The file is never
rewritten, so a crash can at worst leave the last line torn (cut short, without its newline); the
reader skips that line and says so, and the next writer first ends it with a newline so its own
lines stay whole.
"""

from __future__ import annotations

import fcntl
import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ValidationError

Record = TypeVar("Record", bound=BaseModel)


def append_records(path: Path, records: Iterable[BaseModel]) -> int:
    """Append records as JSON lines to `path` (created if absent), as the module docstring says; returns how many.

    Raises:
        OSError: the file cannot be opened, locked or written (what is already there is untouched).
    """
    lines = [record.model_dump_json().encode("utf-8") + b"\n" for record in records]
    if not lines:
        return 0
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            size = os.fstat(fd).st_size
            if size and os.pread(fd, 1, size - 1) != b"\n":
                # An earlier writer died mid-line: end its fragment so our first line starts clean.
                _write_whole(fd, b"\n")
            for line in lines:
                _write_whole(fd, line)
            os.fsync(fd)
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)
    return len(lines)


def _write_whole(fd: int, data: bytes) -> None:
    # A regular file takes the whole buffer in one write; the loop only guards a short write
    # (a full disk), and the lock keeps any remainder adjacent to its start.
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def read_records(path: Path, model: type[Record]) -> tuple[list[Record], list[str]]:
    """Every valid record of a JSON-lines file in file order, and one `FILE:LINE: problem` per line skipped.

    A missing file is no records. Blank lines are ignored. A line that is not JSON or fails the
    model's validation is skipped and reported — never fatal; a torn last line (no newline at the end,
    not JSON: an interrupted write) is reported as such.
    """
    if not path.is_file():
        return [], []
    data = path.read_bytes()
    chunks = data.split(b"\n")
    records: list[Record] = []
    problems: list[str] = []
    for number, chunk in enumerate(chunks, start=1):
        if not chunk.strip():
            continue
        torn = number == len(chunks)  # the text after the last newline: its write may not have ended
        try:
            value = json.loads(chunk.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            if torn:
                problems.append(f"{path}:{number}: torn last line (no newline at the end, not valid JSON: "
                                f"an interrupted write?) ignored")
            else:
                problems.append(f"{path}:{number}: not valid JSON ({_json_error(exc)}); line skipped")
            continue
        try:
            records.append(model.model_validate(value))
        except ValidationError as exc:
            problems.extend(f"{path}:{number}: {problem}; line skipped" for problem in validation_problems(exc))
    return records, problems


def validation_problems(exc: ValidationError) -> list[str]:
    """`field: problem` for each error pydantic found (`record` when the error is about the whole value)."""
    found = []
    for error in exc.errors():
        field = ".".join(str(part) for part in error["loc"]) or "record"
        message = error["msg"]
        if error["type"] == "literal_error":
            message = f"{error['input']!r} is not one of {error['ctx']['expected']}"
        elif error["type"] == "extra_forbidden":
            message = "unknown field"
        found.append(f"{field}: {message}")
    return found


def _json_error(exc: Exception) -> str:
    if isinstance(exc, json.JSONDecodeError):
        return f"{exc.msg} at column {exc.colno}"
    return "not UTF-8 text"
