"""What a detector says about one transition tuple, and where a run keeps it (`detections-<name>.jsonl`)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from pydantic import BaseModel, Field

from cua import write_atomic
from llm import first_problem

DETECTIONS_FILE = "detections-{name}.jsonl"
METRICS_FILE = "defect-metrics-{name}.json"


class Detection(BaseModel):
    """One detector's answer for one tuple (`defect` None: no usable answer, `error` says why)."""

    trajectory: str = Field(description="The tuple's trajectory folder, relative to the run folder.")
    step: int
    detector: str = Field(description="'offline', 'offline-blind', 'commenter', or the registry model name.")
    offline: bool = False
    defect: bool | None = None
    type: str | None = Field(default=None, description="A defect type of `cua.DEFECT_TYPES`, or None.")
    evidence: str = ""
    error: str | None = None
    truth: str | None = Field(default=None, description="The tuple's ground truth, copied for scoring (None: unknown).")
    tokens: int = 0
    prompt_version: str | None = None

    @property
    def key(self) -> tuple[str, int]:
        return self.trajectory, self.step


def _slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", name).strip("-") or "detector"


def detections_path(run_dir: Path | str, name: str) -> Path:
    return Path(run_dir) / DETECTIONS_FILE.format(name=_slug(name))


def metrics_path(run_dir: Path | str, name: str) -> Path:
    return Path(run_dir) / METRICS_FILE.format(name=_slug(name))


def write_detections(run_dir: Path | str, name: str, detections: list[Detection]) -> Path:
    """Write one detector's detections of a run (one JSON object a line, in tuple order), replacing earlier ones."""
    text = "".join(item.model_dump_json() + "\n" for item in detections)
    return write_atomic(detections_path(run_dir, name), text.encode("utf-8"))


def read_detections(run_dir: Path | str, name: str) -> list[Detection]:
    """One detector's detections of a run. Raises FileNotFoundError / ValueError naming the file and line."""
    path = detections_path(run_dir, name)
    if not path.is_file():
        raise FileNotFoundError(f"no {path.name} in '{run_dir}' (run `aui defects eval {run_dir} --detector {name}`)")
    found = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if line.strip():
            try:
                found.append(Detection.model_validate(json.loads(line)))
            except ValueError as exc:
                raise ValueError(f"{path}:{number}: not a detection: {first_problem(exc)}") from None
    return found
