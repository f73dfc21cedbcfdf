"""How far a run is: stages done / expected per kind, the current round, elapsed time and an ETA.

The tracks report here as their stages start and end (`TrackSteps`), and the CLI draws it: a live
display on a terminal, one plain line per finished app round otherwise. A stage shared by tracks
(round 0's verification and rollouts belong to every track of one coder × CUA) is counted once,
by its key. The totals start as the run's bounds (every task supported) and shrink as verification
tells which tasks have a checker, so the ETA sharpens as the run goes.

Stages of a run on a Dask cluster run in other processes; there only the app rounds are counted.

`LimitSampler` says what limits the run right now (`what_limits`): the cores, a model endpoint, the
browser slots (`concurrency`), or nothing saturated — so a researcher knows whether more rollouts in
flight, a faster endpoint or a bigger machine would help.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from llm import model_calls_now
from results import AppRoundResult

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
    eta_s: float | None = None


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
                if first:  # the one call that counted it as running
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
    """What the run's tracks report to; when nobody watches (tests, library use), counts kept and nothing drawn."""
    with _WATCHED_LOCK:
        return _WATCHED.get(Path(run_dir).resolve()) or RunProgress({}, 0, 0)


# A run is CPU-bound when its process tree and everything else keep this share of the cores busy.
CPU_BOUND_SHARE = 0.85


def what_limits(cores_busy: float, cores: int, slots_waiting: int, slots_in_use: int, model_waiting: int,
                model_sending: int) -> str:
    """One line: what the run waits on now. `cores_busy` is the machine's busy cores (0..cores) over the last
    seconds; slots are the rollouts' browser slots; model calls are this process's requests (waiting for an
    endpoint slot, or sent)."""
    if cores_busy >= CPU_BOUND_SHARE * cores:
        return f"CPU ({cores_busy:.1f} of {cores} cores busy)"
    if model_waiting:
        return (f"model endpoint ({model_sending} calls in flight, {model_waiting} waiting for a slot of its "
                "max_concurrency)")
    if model_sending:
        queued = f"; {slots_waiting} rollouts wait for a browser slot (--concurrency)" if slots_waiting else ""
        return f"model latency ({model_sending} calls awaiting replies{queued})"
    if slots_waiting:
        return (f"browser slots ({slots_in_use} rollouts in flight, {slots_waiting} waiting; {cores_busy:.1f} of "
                f"{cores} cores busy: --concurrency)")
    return f"nothing saturated ({cores_busy:.1f} of {cores} cores busy)"


class LimitSampler:
    """`what_limits` from this process's counters and the machine's CPU, the CPU averaged since the last reading
    at least `every_s` ago (a display redraws several times a second; a busy share needs a window)."""

    def __init__(self, every_s: float = 2.0) -> None:
        import psutil

        self._psutil = psutil
        self.every_s = every_s
        self.cores = psutil.cpu_count() or 1
        self._last_at = time.monotonic()
        psutil.cpu_percent(interval=None)  # the first reading starts the window
        self._busy = 0.0

    def now(self) -> str:
        from ._rollouts import browser_slots_now

        at = time.monotonic()
        if at - self._last_at >= self.every_s:
            self._busy = self._psutil.cpu_percent(interval=None) / 100 * self.cores
            self._last_at = at
        return what_limits(self._busy, self.cores, *browser_slots_now(), *model_calls_now())


def format_duration(seconds: float | None) -> str:
    if seconds is None:
        return "–"
    seconds = int(round(seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}h{minutes:02d}m" if hours else f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"
