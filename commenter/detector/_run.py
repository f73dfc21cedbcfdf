"""Detectors by name, run over labelled trajectories, and scored: what `aui defects eval` and the loop call.

    detector = get_detector("offline")            # or "offline-blind", "commenter" (the offline commenter), a model / role
    detections = await detect_trajectories(run_dir, inputs, detector)
    metrics = score_detections(detector.name, detections, offline=detector.offline,
                               reference_assisted=reference_assisted(detector, inputs))

Each input names a trajectory folder (relative to `run_dir`), the app HTML it ran on, the
transform it was served with, and optionally the defect-free version and the task. Every
detector answers per tuple of the trajectory's `tuples.jsonl` (written by the rollout).
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from cua import PageTransform, TransitionTuple, read_tuples
from llm import Registry

from .._offline import OfflineCommenter
from ._commenter_map import COMMENTER_DETECTOR, map_comment
from ._metrics import DetectorMetrics, score
from ._offline import OFFLINE_BLIND_DETECTOR, OFFLINE_DETECTOR, OfflineDetector
from ._records import Detection

DEFAULT_CONCURRENCY = 2

OFFLINE_DETECTORS = (OFFLINE_DETECTOR, OFFLINE_BLIND_DETECTOR, COMMENTER_DETECTOR)
"""The detectors that call no model, by name (any other name is a model role or name of the registry)."""


@dataclass(frozen=True)
class TrajectoryInput:
    """One trajectory to run a detector on, and what it ran on."""

    folder: str
    """Relative to the run folder."""
    html: str
    transform: PageTransform | None = None
    reference_html: str | None = None
    """The defect-free version, for the offline detector's comparisons (None: not known). A detector that
    uses it is reference-assisted: GTArena's detectors are given no such thing."""
    task: str | None = None


class Detector(Protocol):
    name: str
    offline: bool
    uses_reference: bool
    """Whether it compares with the defect-free version when an input has one (`TrajectoryInput.reference_html`)."""

    async def detect_trajectory(self, folder: Path, html: str, *, trajectory_id: str, transform: PageTransform | None,
                                reference_html: str | None, tuples: list[TransitionTuple],
                                task: str | None) -> list[Detection]: ...


class _Commenter:
    """The offline commenter on every trajectory (failed or not), its findings mapped to the tuples."""

    name, offline, uses_reference = COMMENTER_DETECTOR, True, False

    async def detect_trajectory(self, folder, html, *, trajectory_id, transform, reference_html, tuples, task):
        comment = await OfflineCommenter(replay=False).comment(folder, html=html, transform=transform)
        return map_comment(comment, tuples, trajectory_id=trajectory_id)


MODEL_DETECTOR = "model"
"""The registry name of the model detector: `get_detector` gives it every name that is a model (or role)
with an endpoint."""

DETECTORS: Registry[Callable[..., Detector]] = Registry("detector")
"""Detectors by name: the offline ones (`OFFLINE_DETECTORS`) take no arguments; the model one takes
`(client, model)` and is imported when first chosen."""
DETECTORS.add(OFFLINE_DETECTOR, OfflineDetector)
DETECTORS.add(OFFLINE_BLIND_DETECTOR, functools.partial(OfflineDetector, blind=True))
DETECTORS.add(COMMENTER_DETECTOR, _Commenter)
DETECTORS.register_lazy(MODEL_DETECTOR, "commenter.detector._model:ModelDetector")


def get_detector(name: str, client=None) -> Detector:
    """`offline` (the rule-based baseline, reference-assisted when given the defect-free version), `offline-blind`
    (the same rules, never shown the defect-free version), `commenter` (the offline commenter's findings), or a
    model role or name of the registry (needs `client`, an `llm.ModelClient`); a role or model the registry
    marks offline gets the `offline` rules. Each is built by its `DETECTORS` entry.

    Raises:
        ValueError: a model detector without a client. UnknownModelError: a name the registry does not know.
    """
    if name in OFFLINE_DETECTORS:
        return DETECTORS.get(name)()
    if client is None:
        raise ValueError(f"detector {name!r} is a model: it needs a model client (or use one of "
                         f"{', '.join(OFFLINE_DETECTORS)})")
    if client.registry.is_offline(name):
        return DETECTORS.get(OFFLINE_DETECTOR)()
    return DETECTORS.get(MODEL_DETECTOR)(client, name)


def reference_assisted(detector: Detector, inputs: list[TrajectoryInput]) -> bool:
    """Whether `detector`'s answers on `inputs` had the defect-free version to compare with (an oracle)."""
    return detector.uses_reference and any(entry.reference_html is not None for entry in inputs)


async def detect_trajectories(run_dir: Path | str, inputs: list[TrajectoryInput], detector: Detector,
                              concurrency: int = DEFAULT_CONCURRENCY) -> list[Detection]:
    """Every tuple of every input's trajectory, answered by `detector`, in input order.

    Raises FileNotFoundError / ValueError for a trajectory folder without readable tuples (naming it).
    """
    run_dir = Path(run_dir)
    slots = asyncio.Semaphore(max(1, concurrency))

    async def one(entry: TrajectoryInput) -> list[Detection]:
        folder = run_dir / entry.folder
        tuples = read_tuples(folder)
        if not tuples:
            return []
        async with slots:
            return await detector.detect_trajectory(folder, entry.html, trajectory_id=entry.folder,
                                                    transform=entry.transform, reference_html=entry.reference_html,
                                                    tuples=tuples, task=entry.task)

    found = await asyncio.gather(*(one(entry) for entry in inputs))
    return [detection for group in found for detection in group]


def score_detections(name: str, detections: list[Detection], offline: bool = False,
                     reference_assisted: bool = False) -> DetectorMetrics:
    """The GTArena metrics of one detector's detections (their copied ground truth; unknown ones counted apart)."""
    return score(name, [(d.truth, None if d.error else d.defect, d.type) if d.truth is not None else (None, None, None)
                        for d in detections], offline=offline, reference_assisted=reference_assisted)
