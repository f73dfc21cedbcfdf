"""People's labels of trajectories: `labels.jsonl` in the run folder, appended, merged, imported.

The file format (`labels.jsonl`, one JSON object per line, UTF-8)::

    {"trajectory_id": "apps/todo/offline/round-0/rollouts/heuristic/add-item",
     "label": "success", "note": "the item shows", "who": "ana", "when": "2026-11-25T10:02:00Z"}

- `trajectory_id`: the rollout folder relative to the run folder (`TaskOutcome.trajectory` in
  results.json), a trajectory of that run;
- `label`: `success`, `failure` or `unsure` (the person cannot tell);
- `note`: free text, may be empty; `who`: the person (any non-empty name, used to merge);
- `when`: ISO 8601 time of the label (a time without a zone is taken as UTC).

Lines are only ever appended (see `append_labels`): relabelling appends a new line, nothing is
rewritten. How labels merge (`merged_labels`, `label_conflicts`):

1. per person: for each (trajectory, who) the latest label counts — the greatest `when`, and
   among equal times the later line — so a person changes their mind by labelling again;
2. across people, `unsure` abstains: if every person who decided says the same, that is the
   label; if some say `success` and others `failure`, the merged label is `unsure` and the
   trajectory is a conflict (listed in the agreement report); if nobody decided, `unsure`.

`aui label import FILE` takes the same records as JSONL (`.jsonl`/`.ndjson`, same fields) or as CSV
(`.csv`, a header row naming the columns `trajectory_id,label,who` and optionally `note`, `when`, in
any order; empty `note`/`when` cells take the defaults: no note, the time of the import).
"""

from __future__ import annotations

import csv
import difflib
import io
import json
from collections.abc import Iterable, Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ._records import LABELS_FILE, Label, LabelValue, append_records, read_records, run_trajectories
from ._records import validation_problems

MAX_PROBLEMS_SHOWN = 20
CSV_COLUMNS = ("trajectory_id", "label", "note", "who", "when")
_REQUIRED_COLUMNS = ("trajectory_id", "label", "who")


class LabelsRead(BaseModel):
    """What `read_labels` found: the valid labels in file order, and the lines it skipped."""

    labels: list[Label] = Field(default_factory=list)
    problems: list[str] = Field(default_factory=list, description="`FILE:LINE: problem` per skipped line (a torn last line among them).")


class LabelConflict(BaseModel):
    """A trajectory people decided differently (some `success`, some `failure`): merged as `unsure`."""

    trajectory_id: str
    labels: dict[str, LabelValue] = Field(description="Each person's latest label, by who.")


class LabelImportError(ValueError):
    """A labels file with bad lines; nothing was appended.

    `problems` holds every `FILE:LINE: field: problem`; `listing` the first `MAX_PROBLEMS_SHOWN` of
    them and, if there were more, a last line saying how many more (what the message shows).
    """

    def __init__(self, file: Path, problems: list[str]):
        self.file = file
        self.problems = problems
        more = len(problems) - MAX_PROBLEMS_SHOWN
        self.listing = problems[:MAX_PROBLEMS_SHOWN] + ([f"… and {more} more"] if more > 0 else [])
        super().__init__(f"{file}: {len(problems)} problem(s), nothing appended:\n" + "\n".join(self.listing))


class _ImportedLabel(Label):
    """A label as a file gives it: unknown fields are refused (a misspelt column loses nothing silently)."""

    model_config = ConfigDict(extra="forbid")


def append_labels(run_dir: Path | str, labels: Iterable[Label]) -> int:
    """Append labels to the run's `labels.jsonl` as `append_records` does (whole locked lines, fsynced;
    raises its OSError); returns how many were written."""
    return append_records(Path(run_dir) / LABELS_FILE, labels)


def read_labels(run_dir: Path | str) -> LabelsRead:
    """All labels of the run's `labels.jsonl` in file order; lines that are not valid labels (a torn last line)
    are skipped and listed in `problems`, as `read_records` does."""
    labels, problems = read_records(Path(run_dir) / LABELS_FILE, Label)
    return LabelsRead(labels=labels, problems=problems)


def _when(label: Label) -> datetime:
    return label.when if label.when.tzinfo else label.when.replace(tzinfo=timezone.utc)


def latest_labels(labels: Iterable[Label]) -> dict[str, dict[str, Label]]:
    """trajectory_id → who → that person's latest label (greatest `when`; among equal times the later one)."""
    latest: dict[str, dict[str, Label]] = {}
    for label in labels:
        by_person = latest.setdefault(label.trajectory_id, {})
        kept = by_person.get(label.who)
        if kept is None or _when(label) >= _when(kept):
            by_person[label.who] = label
    return latest


def _merge(by_person: dict[str, Label]) -> LabelValue:
    decided = {label.label for label in by_person.values() if label.label != "unsure"}
    return decided.pop() if len(decided) == 1 else "unsure"


def merged_labels(labels: Iterable[Label]) -> dict[str, LabelValue]:
    """trajectory_id → the people's merged label (see the module docstring: latest per person,
    `unsure` abstains, `success` against `failure` is `unsure`)."""
    return {trajectory: _merge(by_person) for trajectory, by_person in latest_labels(labels).items()}


def label_conflicts(labels: Iterable[Label]) -> list[LabelConflict]:
    """Trajectories where people's latest labels include both `success` and `failure`, sorted by id."""
    latest = {trajectory: {who: label.label for who, label in sorted(by_person.items())}
              for trajectory, by_person in sorted(latest_labels(labels).items())}
    return [LabelConflict(trajectory_id=trajectory, labels=values) for trajectory, values in latest.items()
            if {"success", "failure"} <= set(values.values())]


def import_labels(file: Path | str, run_dir: Path | str) -> list[Label]:
    """Validate a CSV or JSONL labels file against the run, then append all its labels; returns them.

    All or nothing: every line is checked first (fields, label values, that the trajectory is one of
    the run's), and if any is bad nothing is appended.

    Raises:
        LabelImportError: bad lines, each as `FILE:LINE: field: problem`; an unknown extension, an
            unreadable or empty file (nothing appended).
        FileNotFoundError / ValueError: the run folder has no readable results.json (from `run_trajectories`).
    """
    file = Path(file)
    known = {ref.trajectory_id for ref in run_trajectories(run_dir)}
    suffix = file.suffix.lower()
    if suffix not in (".csv", ".jsonl", ".ndjson"):
        raise LabelImportError(file, [f"{file}: unknown format '{file.suffix or '(no extension)'}' — give a .csv file "
                                      f"(header row {','.join(CSV_COLUMNS)}) or a .jsonl file (one label object a line)"])
    try:
        text = file.read_text(encoding="utf-8-sig")  # -sig: spreadsheets often start CSV with a byte-order mark
    except FileNotFoundError:
        raise LabelImportError(file, [f"{file}: no such file"]) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise LabelImportError(file, [f"{file}: cannot be read as UTF-8 text ({exc})"]) from None
    rows = _csv_rows(file, text) if suffix == ".csv" else _jsonl_rows(file, text)
    labels: list[Label] = []
    problems: list[str] = []
    for line, row in rows:
        if isinstance(row, str):
            problems.append(row)
            continue
        label, found = _validate_row(file, line, row, known, run_dir)
        problems += found
        if label is not None:
            labels.append(label)
    if not problems and not labels:
        problems.append(f"{file}: no labels in the file")
    if problems:
        raise LabelImportError(file, problems)
    append_labels(run_dir, labels)
    return labels


def _validate_row(file: Path, line: int, row: dict[str, Any], known: set[str], run_dir: Path | str) -> tuple[Label | None, list[str]]:
    for field in ("trajectory_id", "who", "label"):
        if isinstance(row.get(field), str):
            row[field] = row[field].strip().lower() if field == "label" else row[field].strip()
    try:
        imported = _ImportedLabel.model_validate(row)
    except ValidationError as exc:
        return None, [f"{file}:{line}: {problem}" for problem in validation_problems(exc)]
    if imported.trajectory_id not in known:
        close = difflib.get_close_matches(imported.trajectory_id, sorted(known), n=1)
        hint = f" (did you mean '{close[0]}'?)" if close else ""
        return None, [f"{file}:{line}: trajectory_id: '{imported.trajectory_id}' is not a trajectory of the run "
                      f"(not in {Path(run_dir) / 'results.json'}){hint}"]
    return Label(**imported.model_dump(exclude={"when"}), when=_when(imported)), []


def _jsonl_rows(file: Path, text: str) -> Iterator[tuple[int, dict[str, Any] | str]]:
    """(line number, the object) per non-blank line, or (line, `FILE:LINE: problem`)."""
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as exc:
            yield number, f"{file}:{number}: record: not valid JSON ({exc.msg} at column {exc.colno})"
            continue
        if not isinstance(value, dict):
            yield number, f"{file}:{number}: record: not a JSON object (got {type(value).__name__})"
            continue
        yield number, value


def _csv_rows(file: Path, text: str) -> Iterator[tuple[int, dict[str, Any] | str]]:
    """(line number where the row starts, the row by column) per data row, or (line, `FILE:LINE: problem`)."""
    reader = csv.reader(io.StringIO(text, newline=""))
    header: list[str] | None = None
    while True:
        start = reader.line_num + 1
        try:
            cells = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            yield start, f"{file}:{start}: row: not valid CSV ({exc})"
            return  # the reader cannot resynchronise after a broken quote
        if not any(cell.strip() for cell in cells):
            continue
        if header is None:
            header = [cell.strip().lower() for cell in cells]
            problems = _header_problems(header)
            if problems:
                yield from ((start, f"{file}:{start}: header: {problem}") for problem in problems)
                return
            continue
        if len(cells) != len(header):
            yield start, f"{file}:{start}: row: {len(cells)} cells, the header names {len(header)} columns"
            continue
        # an empty optional cell takes the default
        yield start, {name: cell for name, cell in zip(header, cells) if name not in ("note", "when") or cell.strip()}


def _header_problems(header: list[str]) -> list[str]:
    problems = [f"missing column '{column}'" for column in _REQUIRED_COLUMNS if column not in header]
    problems += [f"unknown column '{column}' (columns: {','.join(CSV_COLUMNS)})" for column in header if column not in CSV_COLUMNS]
    problems += [f"column '{column}' appears twice" for column in sorted(set(header)) if header.count(column) > 1]
    return problems
