"""Judges of trajectories beside the checker: a model judge, an offline judge, people's labels,
and how far any two of them agree (the paper's Table 6, OSUniverse's validator–human check).

    refs = run_trajectories(run_dir)        # every trajectory of a finished run, with the checker's say
"""

from ._records import (
    JUDGEMENTS_FILE,
    LABELS_FILE,
    Judgement,
    JudgeMode,
    Label,
    LabelValue,
    TrajectoryRef,
    run_trajectories,
)

__all__ = [
    "JUDGEMENTS_FILE",
    "LABELS_FILE",
    "JudgeMode",
    "Judgement",
    "Label",
    "LabelValue",
    "TrajectoryRef",
    "run_trajectories",
]
