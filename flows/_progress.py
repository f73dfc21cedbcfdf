"""How far a run is: stages done / expected per kind, the current round, elapsed time and an ETA.

The tracks report here as their stages start and end (`TrackSteps`), and the CLI draws it: a live
display on a terminal, one plain line per finished app round otherwise. A stage shared by tracks
(round 0's verification and rollouts belong to every track of one coder × CUA) is counted once,
by its key. The totals start as the run's bounds (every task supported) and shrink as verification
tells which tasks have a checker, so the ETA sharpens as the run goes.

Stages of a run on a Dask cluster run in other processes; there only the app rounds are counted.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from ._results import AppRoundResult

STAGE_KINDS = ("generate", "verify", "vary", "roll out", "comment", "revise")
OPTIONAL_KINDS = ("vary",)  # drawn only in runs that have them (variations besides the default look)
# Relative cost of one stage of each kind for the ETA: a model coder writes a whole app (tens of
# seconds), a rollout is many short steps; offline, every stage is a few seconds at most.
_WEIGHTS_MODEL = {"generate": 30.0, "verify": 10.0, "vary": 5.0, "roll out": 10.0, "comment": 5.0, "revise": 30.0}
_WEIGHTS_OFFLINE = {"generate": 0.2, "verify": 2.0, "vary": 2.0, "roll out": 4.0, "comment": 2.0, "revise": 0.5}


@dataclass(frozen=True)
class KindProgress:
    kind: str
    done: int
    total: int
    running: int


@dataclass(frozen=True)
class ProgressSnapshot:
    kinds: list[KindProgress]
    round: int
    rounds: int
    app_rounds_done: int
    app_rounds_total: int
    elapsed_s: float
    eta_s: float | None = field(default=None)


class RunProgress:
    """Counts of a run's stages, safe to update from any thread of the process."""

    def __init__(self, totals: dict[str, int], app_rounds: int, rounds: int, offline: bool = True,
                 on_round: Callable[[AppRoundResult, "RunProgress"], None] | None = None):
        self._lock = threading.Lock()
        self.totals = {kind: max(0, int(totals.get(kind, 0))) for kind in STAGE_KINDS}
        self.done = dict.fromkeys(STAGE_KINDS, 0)
        self.running = dict.fromkeys(STAGE_KINDS, 0)
        self.rounds, self.app_rounds_total, self.app_rounds_done = rounds, app_rounds, 0
        self.round = 0
        self.weights = _WEIGHTS_OFFLINE if offline else _WEIGHTS_MODEL
        self.on_round = on_round
        self.started = time.monotonic()
        self._begun: set[tuple[str, str]] = set()
        self._ended: set[tuple[str, str]] = set()
        self._adjusted: set[str] = set()

    @contextmanager
    def stage(self, kind: str, key: object, round_: int | None = None) -> Iterator[None]:
        """Count the stage `kind` named `key` as running inside the block and done after it (success or not)."""
        ident = (kind, str(key))
        with self._lock:
            first = ident not in self._begun
            if first:
                self._begun.add(ident)
                self.running[kind] += 1
            if round_ is not None:
                self.round = max(self.round, round_)
        try:
            yield
        finally:
            with self._lock:
                if first and ident not in self._ended:
                    self._ended.add(ident)
                    self.running[kind] -= 1
                    self.done[kind] += 1
                    self.totals[kind] = max(self.totals[kind], self.done[kind] + self.running[kind])

    def fewer(self, kind: str, key: object, count: int) -> None:
        """`count` stages of `kind` the totals counted will not run (e.g. tasks without a checker), once per key."""
        with self._lock:
            if str(key) in self._adjusted or count <= 0:
                return
            self._adjusted.add(str(key))
            self.totals[kind] = max(self.done[kind] + self.running[kind], self.totals[kind] - count)

    def round_finished(self, result: AppRoundResult) -> None:
        with self._lock:
            self.app_rounds_done += 1
        if self.on_round is not None:
            self.on_round(result, self)

    def snapshot(self) -> ProgressSnapshot:
        with self._lock:
            elapsed = time.monotonic() - self.started
            kinds = [KindProgress(k, self.done[k], self.totals[k], self.running[k]) for k in STAGE_KINDS]
            work = sum(self.weights[k.kind] * k.total for k in kinds)
            done = sum(self.weights[k.kind] * k.done for k in kinds)
            eta = elapsed * (work - done) / done if done and work > done else (0.0 if work and done >= work else None)
            return ProgressSnapshot(kinds=kinds, round=self.round, rounds=self.rounds, app_rounds_done=self.app_rounds_done,
                                    app_rounds_total=self.app_rounds_total, elapsed_s=elapsed, eta_s=eta)


class _NoProgress(RunProgress):
    """What a track reports to when nobody watches (tests, library use): counts kept, nothing drawn."""

    def __init__(self) -> None:
        super().__init__({}, 0, 0)


_WATCHED: dict[Path, RunProgress] = {}
_WATCHED_LOCK = threading.Lock()


@contextmanager
def watching(run_dir: Path, progress: RunProgress) -> Iterator[RunProgress]:
    """Make `progress` the one the tracks of the run in `run_dir` report to, inside the block."""
    key = Path(run_dir).resolve()
    with _WATCHED_LOCK:
        _WATCHED[key] = progress
    try:
        yield progress
    finally:
        with _WATCHED_LOCK:
            _WATCHED.pop(key, None)


def progress_for(run_dir: Path) -> RunProgress:
    with _WATCHED_LOCK:
        return _WATCHED.get(Path(run_dir).resolve()) or _NoProgress()


def format_duration(seconds: float | None) -> str:
    if seconds is None:
        return "–"
    seconds = int(round(seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}h{minutes:02d}m" if hours else f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"
