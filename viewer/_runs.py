"""Run folders as the viewer sees them: found on disk, read through the models the flows write.

A run is a folder holding `results.json` (a finished run), `manifest.json` or `.run-key` (a run
that started). The viewer is given run folders or folders of runs; it reads each through
`flows.read_results` / `flows.read_manifest` and keeps what it read until the files change, so a
page costs a stat per run, not a parse. A run whose files are damaged is still listed, with what
is wrong, and every other run keeps working.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from results import AppRoundResult, RunResults, TaskOutcome, Track, read_manifest, read_results

RUN_MARKERS = ("results.json", "manifest.json", ".run-key")


@dataclass(frozen=True)
class TrajectoryEntry:
    """One trajectory of a run, with the first app round that names it (round 0 is shared by tracks)."""

    trajectory_id: str
    result: AppRoundResult
    outcome: TaskOutcome
    variation: str | None = None
    """The variation the app was shown in (`AppRoundResult.variations`); None: its default look."""


@dataclass
class Run:
    """What the viewer knows of one run folder."""

    name: str
    path: Path
    results: RunResults | None
    manifest: dict
    problems: list[str]
    modified: datetime
    trajectories: list[TrajectoryEntry] = field(default_factory=list)
    _positions: dict[str, int] = field(default_factory=dict, repr=False)

    @property
    def finished(self) -> bool:
        return self.results is not None

    @property
    def apps(self) -> list[AppRoundResult]:
        return self.results.apps if self.results else []

    @property
    def config(self) -> dict:
        config = self.manifest.get("config")
        return config if isinstance(config, dict) else {}

    @property
    def offline(self) -> bool:
        """Every role ran on an offline provider, as the run recorded it (`experiment.offline_roles` decided, once)."""
        return bool(self.manifest.get("offline"))

    @property
    def offline_roles(self) -> list[str]:
        """The roles offline providers played, as the run recorded them (results.json, else the manifest)."""
        if self.results is not None:
            return list(self.results.offline_roles)
        roles = self.manifest.get("offline_roles")
        return [str(role) for role in roles] if isinstance(roles, list) else []

    @property
    def rounds(self) -> list[int]:
        return sorted({result.round for result in self.apps})

    def tracks(self, app_id: str | None = None) -> list[Track]:
        """The tracks (coder × CUA × mode × commenter mode) of the run, or of one app, in results order."""
        seen: dict[tuple, Track] = {}
        for result in self.apps:
            if app_id is None or result.app_id == app_id:
                seen.setdefault(result.track_key, result.track)
        return list(seen.values())

    def app_rounds(self, app_id: str, track: Track) -> list[AppRoundResult]:
        key = (track.coder, track.cua, track.mode, track.commenter_mode or "")
        return sorted((r for r in self.apps if r.app_id == app_id and r.track_key == key), key=lambda r: r.round)

    def app_ids(self) -> list[str]:
        return list(dict.fromkeys(result.app_id for result in self.apps))

    def position(self, trajectory_id: str) -> int | None:
        return self._positions.get(trajectory_id)

    def entry(self, trajectory_id: str) -> TrajectoryEntry | None:
        index = self._positions.get(trajectory_id)
        return None if index is None else self.trajectories[index]


def track_id(track: Track) -> str:
    """The track as it appears in URLs: its folder under `apps/<app>/` (e.g. `offline/heuristic/integrated/dashboard`)."""
    return track.folder.as_posix()


def _mtime(path: Path) -> int:
    try:
        return path.stat().st_mtime_ns
    except OSError:
        return 0


def load_run(path: Path, name: str | None = None) -> Run:
    """Read one run folder; what cannot be read becomes a problem of the run, never an exception."""
    path = path.resolve()
    problems: list[str] = []
    results = None
    manifest: dict = {}
    try:
        results = read_results(path)
    except FileNotFoundError:
        problems.append("no results.json yet: the run has not finished (or was stopped before writing its results)")
    except ValueError as exc:
        problems.append(str(exc).replace(str(path) + "/", ""))
    try:
        manifest = read_manifest(path)
    except FileNotFoundError:
        pass
    except ValueError as exc:
        problems.append(str(exc).replace(str(path) + "/", ""))
    stamps = [_mtime(path / marker) for marker in RUN_MARKERS]
    modified = datetime.fromtimestamp(max(stamps) / 1e9, tz=timezone.utc) if any(stamps) else datetime.now(timezone.utc)
    run = Run(name=name or path.name, path=path, results=results, manifest=manifest, problems=problems, modified=modified)
    for result in run.apps:
        # The default look's rollouts, then each variation's (repeat 0, as for the default look): j/k walks one
        # app version in all its looks before the next.
        looks = [(None, result.tasks)] + [(varied.variation, varied.tasks) for varied in result.variations]
        for variation, outcomes in looks:
            for outcome in outcomes:
                if outcome.trajectory and outcome.trajectory not in run._positions:
                    run._positions[outcome.trajectory] = len(run.trajectories)
                    run.trajectories.append(TrajectoryEntry(outcome.trajectory, result, outcome, variation))
    return run


def is_run_folder(path: Path) -> bool:
    return path.is_dir() and any((path / marker).exists() for marker in RUN_MARKERS)


class RunIndex:
    """The runs under the folders the viewer was given, re-read only when their files change."""

    def __init__(self, roots: list[Path]):
        self.roots = [Path(root) for root in roots]
        self._cache: dict[Path, tuple[tuple[int, ...], Run]] = {}

    def _folders(self) -> list[Path]:
        found: list[Path] = []
        for root in self.roots:
            if is_run_folder(root):
                found.append(root.resolve())
            elif root.is_dir():
                found += sorted((child.resolve() for child in root.iterdir() if is_run_folder(child)),
                                key=lambda p: p.name)
        return list(dict.fromkeys(found))

    def runs(self) -> list[Run]:
        """Every run, newest first; names are the folder names (made unique with ~2, ~3… if two roots share one)."""
        runs: list[Run] = []
        names: dict[str, int] = {}
        for folder in self._folders():
            count = names[folder.name] = names.get(folder.name, 0) + 1
            name = folder.name if count == 1 else f"{folder.name}~{count}"
            stamp = tuple(_mtime(folder / marker) for marker in RUN_MARKERS)
            cached = self._cache.get(folder)
            if cached is None or cached[0] != stamp or cached[1].name != name:
                cached = self._cache[folder] = (stamp, load_run(folder, name))
            runs.append(cached[1])
        return sorted(runs, key=lambda run: run.modified, reverse=True)

    def run(self, name: str) -> Run | None:
        return next((run for run in self.runs() if run.name == name), None)
