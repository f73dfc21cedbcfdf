"""Run folders out as a dataset in Hugging Face's folder convention (`aui export`).

    report = export_dataset(["runs/demo"], "exports/demo")   # → exports/demo/{steps,tasks,revisions}/*.parquet + README.md

Three tables (`results._dataset_card`), each a folder of Parquet shards named `train-0000i-of-0000n.parquet`,
and a `README.md` dataset card whose YAML header lists them as configs (`results._dataset_card`). Rows are read
one trajectory at a time and written in row groups of at most `batch_rows` rows or `batch_bytes` bytes, so memory
stays flat however large the run. The dataset is written into a hidden folder beside `out` and moved into place
only once complete: on any error it is removed, and `out` is as it was.
"""

from __future__ import annotations

import re
import shutil
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from itertools import chain
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from apps_prompts import replace_folder

from ._dataset_card import TABLES, arrow_schema, card_text
from ._export_rows import ExportError, RunSource, revision_rows, step_rows, task_rows
from ._outcomes import revised_pairs

BATCH_ROWS = 100
"""Rows per row group (Hugging Face's own writer uses 100 for image datasets: its viewer reads a group at a time)."""
BATCH_BYTES = 64 * 1024 * 1024
"""A row group is flushed once its rows hold this many bytes, whatever their number (screenshots make rows big)."""
SHARD_BYTES = 512 * 1024 * 1024
"""A table's file is closed and the next one started past this size (the hub's advice: shards under ~500 MB)."""
CARD_FILE = "README.md"


class ExportReport(BaseModel):
    """What `export_dataset` wrote."""

    out: str = Field(description="The dataset folder.")
    runs: list[str] = Field(description="The runs exported (their folder names: the `run` column).")
    rows: dict[str, int] = Field(description="Rows per table (steps, tasks, revisions).")
    files: dict[str, list[str]] = Field(description="Per table, its Parquet files relative to `out`.")
    episodes: int = Field(description="Rollouts whose steps are in `steps`.")
    bytes: int = Field(description="Size of the dataset on disk.")
    seconds: float
    offline_roles: dict[str, list[str]] = Field(description="Per run, the roles offline providers played.")
    changes_missing: list[str] = Field(default_factory=list, description="Runs with revisions but no insights.json: "
                                       "their revisions' `changes` are null (`aui insights RUN_DIR` makes it).")


def export_dataset(run_dirs: list[Path | str] | Path | str, out: Path | str, *, batch_rows: int = BATCH_ROWS,
                   batch_bytes: int = BATCH_BYTES, shard_bytes: int = SHARD_BYTES, license: str | None = None,
                   force: bool = False) -> ExportReport:
    """Write the runs' steps, tasks and revisions as Parquet tables with a dataset card into `out`.

    `out` must not exist or be empty, unless `force` (then it is replaced, once the new dataset is complete).

    Raises:
        ExportError: a run folder is not a finished run, or a file it names is missing or unreadable (the message
            names the file); `out` is not empty (without `force`), is a file, or holds a run folder. Nothing is
            left behind: `out` is untouched.
    """
    # pyarrow loads here, not with `results`: every `aui` command and the viewer import `results`, and only an
    # export writes Parquet.
    import pyarrow as pa
    import pyarrow.parquet as pq

    started = time.monotonic()
    out = Path(out)
    if license is not None and not re.fullmatch(r"[A-Za-z0-9][\w.+-]*", license):
        raise ExportError(f"license {license!r}: not a licence id (one word, e.g. mit, apache-2.0, cc-by-4.0)")
    run_dirs = [run_dirs] if isinstance(run_dirs, (str, Path)) else run_dirs  # one folder, not its name's letters
    runs = _sources([Path(run) for run in run_dirs], out, force)
    staging = out.parent / f".{out.name}.exporting-{uuid.uuid4().hex[:12]}"
    made = [folder for folder in (out.parent, *out.parent.parents) if not folder.exists()]  # removed on failure
    staging.mkdir(parents=True)
    try:
        rows, files, episodes = {}, {}, 0

        def every_row(table: str, make: Callable[[RunSource], Iterator[dict]]) -> Iterator[dict]:
            nonlocal episodes
            for run in runs:
                for row in make(run):
                    episodes += table == "steps" and row["step"] == 1
                    yield row

        for table, make in zip(TABLES, (step_rows, task_rows, revision_rows)):
            rows[table], names = _write_table(pa, pq, staging / table, arrow_schema(pa, table), every_row(table, make),
                                              batch_rows, batch_bytes, shard_bytes)
            files[table] = [f"{table}/{name}" for name in names]
        (staging / CARD_FILE).write_text(card_text(runs, rows, license), encoding="utf-8")
        replace_folder(staging, out)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        for folder in made:  # the folders made to hold it, innermost first, while empty
            try:
                folder.rmdir()
            except OSError:
                break
        raise
    size = sum(path.stat().st_size for path in out.rglob("*") if path.is_file())
    return ExportReport(out=str(out), runs=[run.name for run in runs], rows=rows, files=files, episodes=episodes,
                        bytes=size, seconds=round(time.monotonic() - started, 3),
                        offline_roles={run.name: run.offline_roles for run in runs},
                        changes_missing=[run.name for run in runs
                                         if run.changes is None and revised_pairs(run.results.apps)])


def _sources(run_dirs: list[Path], out: Path, force: bool) -> list[RunSource]:
    """The runs, read and checked before anything is written; `out` checked too."""
    if not run_dirs:
        raise ExportError("no run folder given")
    if out.exists() and not out.is_dir():
        raise ExportError(f"{out}: is a file, not a folder to write the dataset into")
    if out.is_dir() and any(out.iterdir()) and not force:
        raise ExportError(f"{out}: not empty — choose another --out, or --force to replace it")
    runs, names = [], {}
    for folder in run_dirs:
        if not folder.is_dir():
            raise ExportError(f"{folder}: no such run folder")
        resolved = folder.resolve()
        if out.resolve() == resolved or out.resolve() in resolved.parents:
            raise ExportError(f"{out}: holds the run folder {folder}; write the dataset somewhere else")
        if resolved in out.resolve().parents:  # --force would replace part of the run (its apps/, say)
            raise ExportError(f"{out}: inside the run folder {folder}; write the dataset somewhere else")
        run = RunSource.read(folder)
        if run.name in names:
            raise ExportError(f"{folder}: a run named '{run.name}' is already exported from {names[run.name]} — the "
                              "`run` column tells runs apart by folder name (give each run once, and distinct names)")
        names[run.name] = folder
        runs.append(run)
    return runs


def _write_table(pa: Any, pq: Any, folder: Path, schema: Any, rows: Iterable[dict], batch_rows: int,
                 batch_bytes: int, shard_bytes: int) -> tuple[int, list[str]]:
    """Rows → Parquet shards of one table, in row groups bounded by rows and bytes: (rows written, the shards' names,
    given once every shard is closed)."""
    if batch_rows < 1 or batch_bytes < 1:
        raise ValueError(f"batch_rows and batch_bytes must be positive, got {batch_rows} and {batch_bytes}")
    folder.mkdir(parents=True)
    parts: list[Path] = []
    pending: list[dict] = []
    writer, written, pending_bytes, shard_written = None, 0, 0, 0
    try:
        for row in chain(rows, [None]):  # None: the end, whatever is pending is written
            if row is not None:
                pending.append(row)
                pending_bytes += sum(len(value) for value in row.values() if isinstance(value, (bytes, str)))
                if len(pending) < batch_rows and pending_bytes < batch_bytes:
                    continue
            if not pending:
                continue
            if writer is None:
                parts.append(folder / f"part-{len(parts):05d}.parquet")
                writer = pq.ParquetWriter(parts[-1], schema, compression="zstd")
            batch = pa.Table.from_pylist(pending, schema=schema)
            writer.write_table(batch, row_group_size=len(pending))
            written += len(pending)
            shard_written += batch.nbytes
            pending, pending_bytes = [], 0
            if shard_written >= shard_bytes:
                writer.close()
                writer, shard_written = None, 0
    finally:
        if writer is not None:
            writer.close()
    if not parts:  # an empty table is still a file with the table's schema, so every config loads
        parts.append(folder / "part-00000.parquet")
        pq.write_table(schema.empty_table(), parts[-1])
    names = [f"train-{index:05d}-of-{len(parts):05d}.parquet" for index in range(len(parts))]
    for part, name in zip(parts, names):
        part.rename(folder / name)
    return written, names
