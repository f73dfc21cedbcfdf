"""The records judges and people leave in a run folder, and the trajectories they are about.

A trajectory is named by its folder relative to the run folder (`TaskOutcome.trajectory` in
`results.json`, e.g. `apps/<app>/offline/round-0/rollouts/heuristic/<task>`): the same id in
`judgements.jsonl`, `labels.jsonl`, the report and the viewer. A rollout shared by several tracks
(round 0 is rolled out once per app and CUA) is one trajectory.

Both files are append-only JSON lines that survive crashes and concurrent writers: a writer appends
each record as one whole line in one `os.write` on an O_APPEND descriptor while holding an exclusive
`fcntl.flock` on the file, then fsyncs before letting go. The file is never rewritten, so a crash can
at worst leave the last line torn (cut short, without its newline); the reader skips that line and
says so, and the next writer first ends it with a newline so its own lines stay whole.
"""

from __future__ import annotations

import fcntl
import json
import os
from collections.abc import Iterable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, Field, ValidationError

from cua import Trajectory

JUDGEMENTS_FILE = "judgements.jsonl"
LABELS_FILE = "labels.jsonl"

JudgeMode = Literal["screenshot", "flow"]
"""What a model judge is shown: the final screenshot, or the trajectory's dashboard (expected flow)."""

LabelValue = Literal["success", "failure", "unsure"]
Record = TypeVar("Record", bound=BaseModel)


def _now() -> datetime:
    return datetime.now(timezone.utc)


class TrajectoryRef(BaseModel):
    """One judged trajectory of a run, with what the checker decided about it."""

    trajectory_id: str = Field(description="The rollout folder, relative to the run folder.")
    app_id: str
    task_id: str
    round: int
    cua: str
    checker_valid: bool = Field(description="The task had a checker that passed the gate (else the checker has no say).")
    checker_success: bool = Field(description="The checker turned true during the rollout.")
    dashboard: str | None = Field(default=None, description="The 1920×1080 dashboard, relative to the run folder.")


class Judgement(BaseModel):
    """One judge's decision on one trajectory (a line of `judgements.jsonl`)."""

    trajectory_id: str
    app_id: str
    task_id: str
    judge: str = Field(description="'offline' or the registry model name that judged.")
    offline: bool
    mode: JudgeMode
    success: bool | None = Field(description="None when the judge gave no usable answer (see `error`).")
    reason: str = ""
    confidence: float = Field(default=0.0, ge=0.0, le=1.0)
    error: str | None = None
    prompt_version: str | None = None
    prompt_sha256: str | None = None
    trajectory_sha256: str | None = Field(
        default=None, description="sha256 of the trajectory.json judged: a changed trajectory is judged again."
    )
    tokens: int = 0
    when: datetime = Field(default_factory=_now)


class TrajectoryJudge:
    """What every judge does first: a judgement naming the judge, and the trajectory loaded with what the judge
    reads of it (`shown`); one that cannot be read is a judgement with an error, never an exception."""

    name: str
    offline: bool
    mode: JudgeMode
    prompt_version: str | None
    prompt_sha256: str
    """With `name` and `mode`, what a cached judgement must match to be reused."""

    async def judge(self, ref: TrajectoryRef, run_dir: Path | str) -> Judgement:
        """Judge the trajectory `ref` names under `run_dir`. Never raises for the trajectory (nor for a model)."""
        judgement = Judgement(trajectory_id=ref.trajectory_id, app_id=ref.app_id, task_id=ref.task_id,
                              judge=self.name, offline=self.offline, mode=self.mode, success=None,
                              prompt_version=self.prompt_version, prompt_sha256=self.prompt_sha256)
        folder = Path(run_dir) / ref.trajectory_id
        try:
            trajectory = Trajectory.load(folder)
            shown = await self.shown(trajectory, folder)
        except (FileNotFoundError, ValueError, OSError) as exc:
            judgement.error = f"nothing to judge: {exc}"
            return judgement
        await self.decide_on(judgement, trajectory, folder, shown)
        return judgement

    async def shown(self, trajectory: Trajectory, folder: Path) -> Any:
        """What the judge reads besides the trajectory (an image), or None; raises OSError when it cannot be read."""

    async def decide_on(self, judgement: Judgement, trajectory: Trajectory, folder: Path, shown: Any) -> None:
        """Fill in `judgement` for the trajectory in `folder`: success, reason and confidence, or why not."""
        raise NotImplementedError


class Label(BaseModel):
    """A person's label of one trajectory (a line of `labels.jsonl`)."""

    trajectory_id: str = Field(min_length=1)
    label: LabelValue
    note: str = ""
    who: str = Field(min_length=1)
    when: datetime = Field(default_factory=_now)


def run_trajectories(run_dir: Path | str) -> list[TrajectoryRef]:
    """Every trajectory of a finished run (from its `results.json`), once each, in results order.

    Raises:
        FileNotFoundError: the folder has no results.json (not a finished run).
        ValueError: results.json is not JSON, naming the file.
    """
    path = Path(run_dir) / "results.json"
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no results.json here — is '{run_dir}' a finished run folder?")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: not valid JSON ({exc.msg} at line {exc.lineno})") from None
    seen: dict[str, TrajectoryRef] = {}
    for app in data.get("apps", []):
        for task in app.get("tasks", []):
            trajectory = task.get("trajectory")
            if not trajectory or trajectory in seen:
                continue
            seen[trajectory] = TrajectoryRef(
                trajectory_id=trajectory,
                app_id=app["app_id"],
                task_id=task["task_id"],
                round=app["round"],
                cua=app["cua"],
                checker_valid=bool(task.get("checker_valid")),
                checker_success=bool(task.get("success")),
                dashboard=task.get("dashboard"),
            )
    return list(seen.values())


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
    chunks = path.read_bytes().split(b"\n")
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
