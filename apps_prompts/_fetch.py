"""Fetching a pinned benchmark into a folder: from its public source over HTTP, or from a local copy (`source=`).

Every file is checked against the sha256 the project keeps before it is written; a file that differs is
refused and named. The files go into a temporary folder beside the destination, which replaces the
destination only once every file is in and verified; on any failure the temporary folder is removed, so
the destination is either absent, the old copy untouched, or the new copy complete.
"""

from __future__ import annotations

import hashlib
import http.client
import json
import os
import shutil
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from ._benchmarks import (
    BASE_URL_VARIABLE,
    DEFAULT_BASE_URL,
    Benchmark,
    ChecksumMismatchError,
    FetchError,
    MissingSourceFileError,
    SourceUnreachableError,
    get_benchmark,
)

SOURCE_RECORD = "SOURCE.json"  # beside the files: what they are, where from, when
DATA_DIR = Path(__file__).resolve().parents[1] / "data"  # the project folder's data/ (git-ignored)

# Downloads use urllib (the standard library): a few dozen small GETs need nothing more, and httpx is only here
# as Prefect's and openai's dependency, not one the project declares. Limits (docs/reliability.md):
TIMEOUT_S = 20.0  # to connect, and for each read of the body
FILE_DEADLINE_S = 120.0  # one file's whole download, however slowly the bytes drip
ATTEMPTS = 3  # a refused connection, a connection dropped half-way, a time-out, 429 or 5xx: tried again
RETRY_DELAYS_S = (0.5, 2.0)  # waits before the 2nd and 3rd attempts
DOWNLOADS_IN_FLIGHT = 4
MAX_FILE_BYTES = 32 * 1024 * 1024  # the largest pinned file is well under 1 MiB
# A temporary folder beside the destination untouched this long was left by a fetch that was killed (SIGKILL, power):
# a live one gains a file at least every FILE_DEADLINE_S. The next fetch into the same place removes it.
LEFTOVER_AFTER_S = 15 * 60


@dataclass(frozen=True)
class FetchReport:
    """What `fetch_benchmark` did: `fetched` False when the destination was already complete (nothing done)."""

    benchmark: str
    repository: str
    commit: str
    license: str
    destination: Path
    source: str  # the base URL or the local folder the files came from (the record's, when nothing was fetched)
    files: int
    bytes: int
    fetched: bool
    seconds: float
    only: tuple[str, ...] | None = None


def default_destination(name: str) -> Path:
    """`data/NAME` in the project folder (git-ignored)."""
    return DATA_DIR / name


def fetch_benchmark(benchmark: str | Benchmark, to: Path | str | None = None, source: Path | str | None = None,
                    base_url: str | None = None, only: Iterable[str] | None = None, force: bool = False) -> FetchReport:
    """Fetch a pinned benchmark (by name, or a `Benchmark` of your own) into `to` (default `data/NAME`).

    `source`: a local clone, an unpacked GitHub archive (one top folder holding the repository) or a folder in
    the fetched layout, read instead of the network. Otherwise each file is downloaded from `base_url`
    (default: $AUI_BENCHMARK_BASE_URL, else raw.githubusercontent.com) as BASE/OWNER/REPO/COMMIT/PATH.
    `only`: these app ids (the licence always comes along). A destination already complete and verified is left
    as it is unless `force`.

    Raises:
        UnknownBenchmarkError: an unknown name or app id. SourceUnreachableError: no connection to the base URL.
        ChecksumMismatchError / MissingSourceFileError: a file that differs or is absent (named).
        FetchError: anything else that stopped the fetch (the destination is as it was).
    """
    bench = benchmark if isinstance(benchmark, Benchmark) else get_benchmark(benchmark)
    if isinstance(only, str):
        only = only.split(",")  # "a,b": ids, comma-separated, not its letters
    only_ids = None if only is None else tuple(dict.fromkeys(app_id.strip() for app_id in only if app_id.strip()))
    wanted = bench.files_for(only_ids)
    destination = (Path(to) if to is not None else default_destination(bench.name)).resolve()
    started = time.monotonic()
    record = _own_record(bench, destination)
    if not force and record is not None and _complete(bench, destination, record, wanted):
        size = sum((destination / bench.destination(path)).stat().st_size for path in wanted)
        return FetchReport(bench.name, bench.repository, bench.commit, bench.license, destination,
                           str(record.get("fetched_from", "")), len(wanted), size, False,
                           time.monotonic() - started, only_ids)
    if source is not None:
        where = str(Path(source).resolve())
        read = _local_reader(bench, Path(source), wanted)
    else:
        where = base_url or os.environ.get(BASE_URL_VARIABLE) or DEFAULT_BASE_URL
        read = None
        if not where.startswith(("http://", "https://")):
            raise FetchError(f"base URL {where!r} (--base-url or ${BASE_URL_VARIABLE}) is not an http:// or https:// address")
    try:
        destination.parent.mkdir(parents=True, exist_ok=True)
        _remove_leftovers(destination)
        staging = Path(tempfile.mkdtemp(prefix=f".{destination.name}.fetching-", dir=destination.parent))
    except OSError as error:
        raise FetchError(f"cannot write in {destination.parent}: {error.strerror or error}") from None
    try:
        staging.chmod(0o755)  # mkdtemp's 0700 would become the destination's
        if read is not None:
            size = sum(_write(staging, bench.destination(path), read(path)) for path in wanted)
        else:
            size = _download_all(bench, where, wanted, staging)
        _write_record(staging, bench, where, wanted, only_ids)
        replace_folder(staging, destination)
    except OSError as error:  # a disk that is full, a file that cannot be read: named, one line
        shutil.rmtree(staging, ignore_errors=True)
        raise FetchError(f"{error.filename or destination}: {error.strerror or error}; nothing written") from None
    except BaseException:  # KeyboardInterrupt too: never leave a half-written folder
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return FetchReport(bench.name, bench.repository, bench.commit, bench.license, destination, where,
                       len(wanted), size, True, time.monotonic() - started, only_ids)


def _verified(bench: Benchmark, path: str, data: bytes, where: str) -> bytes:
    """`data` when its sha256 is the pinned one for `path`, else ChecksumMismatchError naming the file, where it
    came from and both sums."""
    digest = hashlib.sha256(data).hexdigest()
    if digest != bench.files[path]:
        raise ChecksumMismatchError(
            f"{path} from {where} differs from {bench.name}'s pinned file ({bench.repository} at {bench.commit[:7]}): "
            f"sha256 {digest[:12]}… instead of {bench.files[path][:12]}…; refused, nothing written", path)
    return data


def _own_record(bench: Benchmark, destination: Path) -> dict | None:
    """The destination's SOURCE.json when it is a fetched copy of `bench`; None when absent or empty. FetchError
    when the destination is a file, or a folder with other things in it (never replaced)."""
    if not destination.exists():
        return None
    if not destination.is_dir():
        raise FetchError(f"{destination} is a file, not a folder: choose another --to")
    try:
        record = json.loads((destination / SOURCE_RECORD).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        record = None
    if isinstance(record, dict) and record.get("benchmark") == bench.name:
        return record
    if any(destination.iterdir()):
        raise FetchError(f"{destination} is not empty and is not a copy of {bench.name} that `aui apps fetch` wrote "
                         f"(no {SOURCE_RECORD} naming it): choose another --to, or empty the folder")
    return None


def _complete(bench: Benchmark, destination: Path, record: dict, wanted: dict[str, str]) -> bool:
    """Whether the destination holds this commit's `wanted` files, each with its pinned sum."""
    files = {destination / bench.destination(path): digest for path, digest in wanted.items()}
    return record.get("commit") == bench.commit and all(
        file.is_file() and hashlib.sha256(file.read_bytes()).hexdigest() == digest for file, digest in files.items())


def _local_reader(bench: Benchmark, folder: Path, wanted: dict[str, str]):
    """`read(path) -> verified bytes` over a local folder, its layout found first. FetchError: no such folder, an
    archive not unpacked, or none of the benchmark's files there; MissingSourceFileError: a wanted file is not there
    (the first named, the others counted)."""
    if folder.is_file():
        raise FetchError(f"--from {folder} is a file: unpack the archive (tar xzf / unzip) and pass its folder")
    if not folder.is_dir():
        raise FetchError(f"--from {folder}: no such folder")
    root, place = _layout(bench, folder, wanted)
    missing = [root / place(path) for path in wanted if not (root / place(path)).is_file()]
    if missing:
        more = f" ({len(missing) - 1} more of the {len(wanted)} files wanted are missing too)" if len(missing) > 1 else ""
        raise MissingSourceFileError(f"{missing[0]}: missing in --from {folder}{more}; {bench.name} is "
                                     f"{bench.repository} at {bench.commit[:7]} (--app ID fetches fewer apps)",
                                     str(missing[0]))

    def read(path: str) -> bytes:
        file = root / place(path)
        if file.stat().st_size > MAX_FILE_BYTES:
            raise ChecksumMismatchError(f"{file}: {file.stat().st_size:,} bytes, not {bench.name}'s {path}; refused", path)
        return _verified(bench, path, file.read_bytes(), str(file))

    return read


def _layout(bench: Benchmark, folder: Path, wanted: dict[str, str]):
    """Where the files are under `folder`: the folder itself or the one folder inside it that holds them (an unpacked
    archive's `REPO-COMMIT/`), in the repository's layout (`examples/ID.yaml`) or the fetched one (`ID.yaml`)."""
    probes = [path for path in wanted if bench.app_id(path) is not None] or list(wanted)
    layouts = ((lambda path: path), bench.destination)
    inside = sorted(child for child in folder.iterdir() if child.is_dir() and not child.name.startswith("."))
    found = [(root, place) for root in (folder, *inside) for place in layouts
             if any((root / place(path)).is_file() for path in probes)]
    if not found:
        raise FetchError(f"--from {folder}: none of {bench.name}'s files there (expected e.g. {folder / probes[0]}: a "
                         f"clone of {bench.repository}, its unpacked archive, or a folder `aui apps fetch` wrote)")
    roots = list(dict.fromkeys(root for root, _ in found))
    if folder not in roots and len(roots) > 1:
        raise FetchError(f"--from {folder}: several folders in it hold {bench.name}'s files "
                         f"({', '.join(root.name for root in roots)}): pass one of them")
    return found[0]


def _write(staging: Path, relative: str, data: bytes) -> int:
    file = staging / relative
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_bytes(data)
    return len(data)


def _write_record(staging: Path, bench: Benchmark, where: str, wanted: dict[str, str], only: tuple[str, ...] | None) -> None:
    record = {
        "benchmark": bench.name, "description": bench.description, "repository": bench.repository,
        "commit": bench.commit, "license": f"{bench.license} (the repository's LICENSE, beside this file)",
        "fetched_from": where, "fetched_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "only": list(only) if only is not None else None,
        "refresh": f"aui apps fetch {bench.name} --force",
        "files": {bench.destination(path): digest for path, digest in sorted(wanted.items())},
    }
    (staging / SOURCE_RECORD).write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")


def _remove_leftovers(destination: Path) -> None:
    """Remove the temporary folders killed fetches into `destination` left beside it (untouched for LEFTOVER_AFTER_S)."""
    for pattern in (f".{destination.name}.fetching-*", f".{destination.name}.old-*"):
        for folder in destination.parent.glob(pattern):
            if folder.is_dir() and time.time() - folder.stat().st_mtime > LEFTOVER_AFTER_S:
                shutil.rmtree(folder, ignore_errors=True)


def replace_folder(staging: Path, destination: Path) -> None:
    """Move the complete staging folder to `destination`; an old copy is moved aside first and removed after (and put
    back if the move fails). The fetch and the dataset export both finish so."""
    if not destination.exists():
        os.rename(staging, destination)
        return
    old = Path(tempfile.mkdtemp(prefix=f".{destination.name}.old-", dir=destination.parent))
    os.rename(destination, old / destination.name)
    try:
        os.rename(staging, destination)
    except BaseException:
        os.rename(old / destination.name, destination)  # the old copy back where it was
        raise
    finally:
        shutil.rmtree(old, ignore_errors=True)


def _download_all(bench: Benchmark, base_url: str, wanted: dict[str, str], staging: Path) -> int:
    """Download and verify every wanted file into `staging`, a few at a time; the first failure stops the rest."""
    stop = threading.Event()
    size = 0
    with ThreadPoolExecutor(max_workers=DOWNLOADS_IN_FLIGHT, thread_name_prefix="fetch") as pool:
        futures = {pool.submit(_download, bench, base_url, path, stop): path for path in wanted}
        try:
            for future in as_completed(futures):
                path = futures[future]
                size += _write(staging, bench.destination(path), _verified(bench, path, future.result(), bench.url(base_url, path)))
        except BaseException:
            stop.set()
            for future in futures:
                future.cancel()
            raise
    return size


class _Stopped(Exception):
    """Another download failed: this one gives up (never seen by callers)."""


def _download(bench: Benchmark, base_url: str, path: str, stop: threading.Event) -> bytes:
    """One file's bytes, in at most ATTEMPTS attempts. MissingSourceFileError: 404; SourceUnreachableError: no
    attempt got a connection; FetchError: another HTTP error, or each attempt failed part-way (dropped, timed out,
    5xx)."""
    url = bench.url(base_url, path)
    connected, problem = False, ""
    for attempt in range(ATTEMPTS):
        if attempt:
            stop.wait(RETRY_DELAYS_S[min(attempt, len(RETRY_DELAYS_S)) - 1])
        if stop.is_set():
            raise _Stopped
        try:
            return _get(url, stop)
        except urllib.error.HTTPError as error:
            connected, problem = True, f"HTTP {error.code} {error.reason}"
            if error.code == 404:
                raise MissingSourceFileError(f"{url}: not found (HTTP 404); {bench.name} pins {path} at "
                                             f"{bench.commit[:7]}: is the base URL {base_url} right?", path) from None
            if error.code not in (408, 429) and error.code < 500:
                raise FetchError(f"{url}: {problem}") from None
        except urllib.error.URLError as error:  # no connection made (DNS, refused, unreachable, connect time-out)
            problem = str(getattr(error.reason, "strerror", None) or error.reason)
        except (http.client.HTTPException, OSError) as error:  # connected, then dropped or timed out part-way
            connected, problem = True, _describe(error)
    if not connected:
        raise SourceUnreachableError(
            f"could not reach {base_url} ({problem}); without internet, fetch {bench.name} from a local clone or "
            f"unpacked archive of {bench.repository} (commit {bench.commit[:7]}) with --from PATH")
    raise FetchError(f"{url}: {problem} on each of {ATTEMPTS} attempts; nothing written. Try again later, "
                     f"or fetch from a local copy with --from PATH")


def _get(url: str, stop: threading.Event) -> bytes:
    """The body of one GET, read to its end within FILE_DEADLINE_S.

    Raises:
        http.client.IncompleteRead: the connection closed before the announced Content-Length (http.client's
            `read(amt)` returns the short body without a word, for compatibility; a chunked body raises by itself).
    """
    request = urllib.request.Request(url, headers={"User-Agent": "aui-loop (aui apps fetch)"})
    deadline = time.monotonic() + FILE_DEADLINE_S
    chunks, size = [], 0
    with urllib.request.urlopen(request, timeout=TIMEOUT_S) as response:
        announced = response.headers.get("Content-Length")
        while chunk := response.read(64 * 1024):
            size += len(chunk)
            if size > MAX_FILE_BYTES:
                raise FetchError(f"{url}: more than {MAX_FILE_BYTES:,} bytes; refused")
            if time.monotonic() > deadline:
                raise TimeoutError(f"not read within {FILE_DEADLINE_S:.0f} s")
            if stop.is_set():
                raise _Stopped
            chunks.append(chunk)
    if announced is not None and announced.isdigit() and size < int(announced):
        raise http.client.IncompleteRead(b"".join(chunks), int(announced) - size)
    return b"".join(chunks)


def _describe(error: Exception) -> str:
    if isinstance(error, http.client.IncompleteRead):
        return f"the connection closed after {len(error.partial):,} bytes, {error.expected:,} short"
    if isinstance(error, TimeoutError):
        said = str(error)
        return f"timed out ({said if said and said != 'timed out' else f'{TIMEOUT_S:.0f} s without a byte'})"
    return f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
