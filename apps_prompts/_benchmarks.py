"""The benchmarks `aui apps fetch` knows: public repositories pinned to a commit, every file with its sha256.

The facts live in `benchmarks.json` beside this module (the files themselves never enter the project).
A `Benchmark` also says where each repository file goes in the fetched folder: the `strip` prefix is
dropped (AUI-Gym's `examples/<id>.yaml` → `<id>.yaml`, so `aui apps list DIR` and `aui run --apps DIR`
read the folder; GPT-5's `apps/<id>/index.html` → `<id>/index.html`, so `--v0-dir DIR` reads it), and a
file outside the prefix (`LICENSE`) keeps its path.
"""

from __future__ import annotations

import difflib
import functools
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from types import MappingProxyType

BENCHMARKS_FILE = Path(__file__).parent / "benchmarks.json"
DEFAULT_BASE_URL = "https://raw.githubusercontent.com"
BASE_URL_VARIABLE = "AUI_BENCHMARK_BASE_URL"
_SHA256 = re.compile(r"[0-9a-f]{64}")


class FetchError(Exception):
    """A benchmark could not be fetched; the message is one line naming what failed and what to do (`path`: the
    repository file at fault, for the two errors about one file)."""

    def __init__(self, message: str, path: str | None = None):
        super().__init__(message)
        self.path = path


class UnknownBenchmarkError(FetchError):
    """A benchmark name, or an app id of one, that the project does not pin."""


class SourceUnreachableError(FetchError):
    """The download source could not be reached at all (no network, wrong base URL)."""


class ChecksumMismatchError(FetchError):
    """A file's bytes differ from the pinned sha256: refused, nothing written."""


class MissingSourceFileError(FetchError):
    """A pinned file is not in the source (a `--from` folder, or the server answered 404)."""


@dataclass(frozen=True)
class Benchmark:
    """A benchmark by name: its repository (`github.com/OWNER/REPO`), the commit it is pinned to, its licence,
    every file's sha256 by repository path, and the folder prefix `strip` dropped from app files' paths."""

    name: str
    repository: str
    commit: str
    license: str
    files: Mapping[str, str]
    strip: str = ""
    description: str = ""
    _ids: tuple[str, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not self.repository.startswith("github.com/") or self.repository.count("/") != 2:
            raise ValueError(f"benchmark {self.name!r}: repository {self.repository!r} is not github.com/OWNER/REPO")
        destinations: dict[str, str] = {}
        for path, digest in self.files.items():
            parts = PurePosixPath(path).parts
            if PurePosixPath(path).is_absolute() or ".." in parts or not parts:
                raise ValueError(f"benchmark {self.name!r}: file path {path!r} must stay inside the repository")
            if not _SHA256.fullmatch(digest):
                raise ValueError(f"benchmark {self.name!r}: {path}: {digest!r} is not a lower-case sha256")
            if self.destination(path) in destinations:
                raise ValueError(f"benchmark {self.name!r}: {path} and {destinations[self.destination(path)]} "
                                 f"would both be written to {self.destination(path)}")
            destinations[self.destination(path)] = path
        object.__setattr__(self, "files", MappingProxyType(dict(self.files)))
        ids = sorted({app_id for app_id in map(self.app_id, self.files) if app_id is not None})
        object.__setattr__(self, "_ids", tuple(ids))

    @property
    def owner_repo(self) -> str:
        """`OWNER/REPO`."""
        return self.repository.removeprefix("github.com/")

    def destination(self, path: str) -> str:
        """Where a repository file goes in the fetched folder (relative, `/`-separated)."""
        return path[len(self.strip):] if self.strip and path.startswith(self.strip) else path

    def app_id(self, path: str) -> str | None:
        """The app a repository file belongs to (`examples/pomodoro.yaml`, `apps/pomodoro/index.html` → `pomodoro`);
        None for the files every fetch takes (`LICENSE`)."""
        if not self.strip or not path.startswith(self.strip):
            return None
        rest = PurePosixPath(path[len(self.strip):])
        return rest.parts[0] if len(rest.parts) > 1 else rest.stem

    def app_ids(self) -> list[str]:
        """Every app id the benchmark has, sorted."""
        return list(self._ids)

    def files_for(self, only: Iterable[str] | None = None) -> dict[str, str]:
        """The repository paths (→ sha256) a fetch of `only` these app ids takes (None: all), licence included.
        Raises UnknownBenchmarkError for an id the benchmark does not have (named, with the closest known ones),
        or none given."""
        if only is None:
            return dict(self.files)
        wanted = list(dict.fromkeys(only))
        if not wanted:
            raise UnknownBenchmarkError(f"{self.name}: no app id given to fetch (leave --app out to fetch all {len(self._ids)})")
        unknown = [app_id for app_id in wanted if app_id not in self._ids]
        if unknown:
            near = difflib.get_close_matches(unknown[0], self._ids, n=3)
            hint = f" (did you mean {', '.join(near)}?)" if near else ""
            raise UnknownBenchmarkError(
                f"{self.name} has no app {', '.join(map(repr, unknown))}{hint}; its {len(self._ids)} apps are "
                f"{self.repository}'s {self.strip or '/'}… at {self.commit[:7]}, e.g. {', '.join(self._ids[:3])}")
        return {path: digest for path, digest in self.files.items() if self.app_id(path) in (None, *wanted)}

    def url(self, base_url: str, path: str) -> str:
        """The file's download address: `BASE/OWNER/REPO/COMMIT/PATH` (raw.githubusercontent.com's shape)."""
        return f"{base_url.rstrip('/')}/{self.owner_repo}/{self.commit}/{path}"


def known_benchmarks() -> dict[str, Benchmark]:
    """The benchmarks the project pins (`benchmarks.json`), by name."""
    return dict(_pinned())


@functools.cache
def _pinned() -> dict[str, Benchmark]:
    data = json.loads(BENCHMARKS_FILE.read_text(encoding="utf-8"))
    return {name: Benchmark(name=name, **entry) for name, entry in data.items() if isinstance(entry, dict)}


def get_benchmark(name: str) -> Benchmark:
    """The pinned benchmark called `name`; UnknownBenchmarkError (listing the known ones) for another name."""
    known = known_benchmarks()
    if name not in known:
        raise UnknownBenchmarkError(f"unknown benchmark {name!r} (known: {', '.join(known)})")
    return known[name]
