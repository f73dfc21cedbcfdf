"""GTArena's metrics of a GUI defect detector over transition tuples whose ground truth is known.

- **Recall-D**: of the defective tuples, the share the detector called defective (whatever type).
- **Recall-N**: of the normal tuples, the share the detector called normal.
- **Accuracy**: of all tuples, the share it got right — a normal tuple called normal, or a
  defective tuple called defective *with its type*.
- Per type (of the ground truth): how many tuples, Recall-D and type accuracy (called defective
  with that type); per kind (display / interaction): the same over the kind's types.
- The confusion matrix over types: rows the ground truth (each type, then `none`), columns what
  the detector said (each type, `none`, `defect` for "defective, type not given", `error` when it
  gave no usable answer).

A detector's error (no usable reply) counts as a wrong answer in every figure: it is neither
defective nor normal. Tuples with unknown ground truth are left out (and counted). Rates are
fractions (None when nothing was there to measure); `percent` renders them the way GTArena
reports them.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from pydantic import BaseModel, Field, computed_field

from cua import DEFECT_TYPES, NO_DEFECT

UNTYPED = "defect"
"""A confusion-matrix column: called defective without a (known) type."""
ERROR = "error"
"""A confusion-matrix column: the detector gave no usable answer."""
REFERENCE_ASSISTED = "reference-assisted"
"""How the figures of a detector that compared with the defect-free app are labelled (`DetectorMetrics.label`)."""
REFERENCE_NOTE = ("reference-assisted: given the defect-free app to compare with, which GTArena's detectors are not; "
                  "a blind detector's figures compare like for like")
"""The sentence beside reference-assisted figures (CLI, report, viewer)."""


class Scored(BaseModel):
    """One tuple as scored: its ground truth and what the detector said."""

    truth: str = Field(description="A defect type or 'none'.")
    defect: bool | None = Field(description="The detector's call; None: it gave no usable answer.")
    type: str | None = None


class Rates(BaseModel):
    """Counts and rates over one group of tuples."""

    tuples: int = 0
    defective: int = 0
    normal: int = 0
    detected: int = Field(default=0, description="Defective tuples called defective.")
    typed: int = Field(default=0, description="Defective tuples called defective with their type.")
    cleared: int = Field(default=0, description="Normal tuples called normal.")
    errors: int = 0

    @computed_field
    @property
    def accuracy(self) -> float | None:
        return (self.typed + self.cleared) / self.tuples if self.tuples else None

    @computed_field
    @property
    def recall_d(self) -> float | None:
        return self.detected / self.defective if self.defective else None

    @computed_field
    @property
    def recall_n(self) -> float | None:
        return self.cleared / self.normal if self.normal else None

    @computed_field
    @property
    def type_accuracy(self) -> float | None:
        """Of the defective tuples, the share called defective with their type."""
        return self.typed / self.defective if self.defective else None

    def add(self, item: Scored) -> None:
        self.tuples += 1
        if item.defect is None:
            self.errors += 1
        if item.truth == NO_DEFECT:
            self.normal += 1
            self.cleared += item.defect is False
        else:
            self.defective += 1
            self.detected += item.defect is True
            self.typed += item.defect is True and item.type == item.truth


class DetectorMetrics(BaseModel):
    """A detector's figures over one set of labelled tuples."""

    detector: str
    offline: bool = False
    reference_assisted: bool = Field(default=False, description=(
        "The detector was given the defect-free version of the app and compared with it: an oracle GTArena's "
        "detectors do not have, so these figures are not like for like with theirs."))
    overall: Rates = Field(default_factory=Rates)
    by_type: dict[str, Rates] = Field(default_factory=dict, description="Defective tuples per ground-truth type.")
    by_kind: dict[Literal["display", "interaction"], Rates] = Field(
        default_factory=dict, description="Defective tuples per kind, and (in each) the normal tuples too.")
    confusion: dict[str, dict[str, int]] = Field(default_factory=dict, description="truth → said → count.")
    unknown: int = Field(default=0, description="Tuples left out: their ground truth is unknown.")

    @property
    def label(self) -> str:
        """The detector's name with what sets its figures apart: `offline (offline baseline, reference-assisted)`."""
        notes = [note for note, applies in (("offline baseline", self.offline),
                                            (REFERENCE_ASSISTED, self.reference_assisted)) if applies]
        return f"{self.detector} ({', '.join(notes)})" if notes else self.detector

    @property
    def columns(self) -> list[str]:
        """The confusion matrix's columns, in a fixed order."""
        return [*DEFECT_TYPES, NO_DEFECT, UNTYPED, ERROR]

    @property
    def rows(self) -> list[str]:
        """The confusion matrix's rows that hold any tuple, in the taxonomy's order (then `none`)."""
        return [row for row in [*DEFECT_TYPES, NO_DEFECT] if row in self.confusion]


def said(item: Scored) -> str:
    """The confusion-matrix column of what the detector said about one tuple."""
    if item.defect is None:
        return ERROR
    if item.defect is False:
        return NO_DEFECT
    return item.type if item.type in DEFECT_TYPES else UNTYPED


def score(detector: str, items: Iterable[tuple[str | None, bool | None, str | None]],
          offline: bool = False, reference_assisted: bool = False) -> DetectorMetrics:
    """The metrics of `detector` over `items`: (truth, defect, type) — truth None when unknown."""
    metrics = DetectorMetrics(detector=detector, offline=offline, reference_assisted=reference_assisted)
    for truth, defect, kind in items:
        if truth is None:
            metrics.unknown += 1
            continue
        item = Scored(truth=truth, defect=defect, type=kind)
        if item.truth != NO_DEFECT and item.truth not in DEFECT_TYPES:
            raise ValueError(f"ground truth {item.truth!r} is not a defect type nor '{NO_DEFECT}'")
        metrics.overall.add(item)
        row = metrics.confusion.setdefault(item.truth, {})
        column = said(item)
        row[column] = row.get(column, 0) + 1
        if item.truth == NO_DEFECT:
            for kind in ("display", "interaction"):
                metrics.by_kind.setdefault(kind, Rates()).add(item)
        else:
            metrics.by_type.setdefault(item.truth, Rates()).add(item)
            metrics.by_kind.setdefault(DEFECT_TYPES[item.truth], Rates()).add(item)
    metrics.by_type = {name: metrics.by_type[name] for name in DEFECT_TYPES if name in metrics.by_type}
    metrics.by_kind = {kind: metrics.by_kind[kind] for kind in ("display", "interaction") if kind in metrics.by_kind}
    return metrics


def percent(rate: float | None) -> str:
    """A rate as GTArena prints it (`14.0`), `–` when there was nothing to measure."""
    return "–" if rate is None else f"{100 * rate:.1f}"
