"""`commenter.detector`: GUI defect detectors over transition tuples, and their metrics (GTArena's way).

The commenter's sibling (design.md §11): both read trajectories and say what is wrong; they share
the measured page facts and the tuples, and are scored with the same metrics.

    detector = get_detector("offline" | "offline-blind" | "commenter" | "detector")  # rules, rules without the
                                                                     # defect-free app, the offline commenter, a model
    detections = await detect_trajectories(run_dir, inputs, detector)  # one `Detection` per tuple
    metrics = score_detections(detector.name, detections)             # Accuracy, Recall-D, Recall-N, per type…

The model detector (`detector` role) is shown the screenshot before and after one action and the
action, and replies `{defect, type, evidence}` (`DETECTION_SCHEMA`), repaired once, else recorded
as an error. The offline detector (labelled offline) applies fixed rules to measured facts: an
honest baseline. Given the defect-free version it compares with it — an oracle GTArena's detectors
lack, so its figures say *reference-assisted* (`DetectorMetrics.reference_assisted`); `offline-blind`
runs the same rules without it, for a like-for-like comparison. The commenter's findings are mapped to the tuples they name (`map_comment`).
"""

from ._commenter_map import COMMENTER_DETECTOR, FACT_TYPES, map_comment
from ._metrics import (
    ERROR,
    REFERENCE_ASSISTED,
    REFERENCE_NOTE,
    UNTYPED,
    DetectorMetrics,
    Rates,
    Scored,
    percent,
    score,
)
from ._model import DEFAULT_ROLE, DetectionError, ModelDetector, parse_detection
from ._offline import OFFLINE_BLIND_DETECTOR, OFFLINE_DETECTOR, OFFLINE_VERSION, OfflineDetector, judge
from ._prompts import DEFINITIONS, DETECTION_SCHEMA, PROMPT_VERSION, prompt_sha256, system_prompt
from ._records import (
    DETECTIONS_FILE,
    METRICS_FILE,
    Detection,
    metrics_path,
    read_detections,
    write_detections,
)
from ._run import (
    DETECTORS,
    MODEL_DETECTOR,
    OFFLINE_DETECTORS,
    TrajectoryInput,
    detect_trajectories,
    get_detector,
    reference_assisted,
    score_detections,
)

__all__ = [
    "COMMENTER_DETECTOR",
    "DEFAULT_ROLE",
    "DEFINITIONS",
    "DETECTION_SCHEMA",
    "DETECTIONS_FILE",
    "DETECTORS",
    "ERROR",
    "FACT_TYPES",
    "METRICS_FILE",
    "MODEL_DETECTOR",
    "OFFLINE_BLIND_DETECTOR",
    "OFFLINE_DETECTOR",
    "OFFLINE_DETECTORS",
    "OFFLINE_VERSION",
    "PROMPT_VERSION",
    "REFERENCE_ASSISTED",
    "REFERENCE_NOTE",
    "UNTYPED",
    "Detection",
    "DetectionError",
    "DetectorMetrics",
    "ModelDetector",
    "OfflineDetector",
    "Rates",
    "Scored",
    "TrajectoryInput",
    "detect_trajectories",
    "get_detector",
    "judge",
    "map_comment",
    "metrics_path",
    "parse_detection",
    "percent",
    "prompt_sha256",
    "read_detections",
    "reference_assisted",
    "score",
    "score_detections",
    "system_prompt",
    "write_detections",
]
