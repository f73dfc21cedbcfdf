"""Judges of trajectories beside the checker: a model judge, an offline judge, people's labels,
and how far any two of them agree (the paper's Table 6, OSUniverse's validator–human check).

    refs = run_trajectories(run_dir)        # every trajectory of a finished run, with the checker's say
    import_labels("labels.csv", run_dir)    # people's labels → labels.jsonl (validated, all or nothing)
    agreement_report(run_dir).pairs         # every two judges: n, agreement, Cohen's κ, balanced accuracy
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

# People's labels and agreement between judges (issue 14, §2 agreement report and §3).
from ._agreement import ConfusionMatrix, PairAgreement, agreement
from ._agreement_report import AGREEMENT_FILE, AgreementReport, JudgeSummary, agreement_report
from ._labels import (
    LabelConflict,
    LabelImportError,
    LabelsRead,
    append_labels,
    import_labels,
    label_conflicts,
    merged_labels,
    read_labels,
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

__all__ += [
    "AGREEMENT_FILE",
    "AgreementReport",
    "ConfusionMatrix",
    "JudgeSummary",
    "LabelConflict",
    "LabelImportError",
    "LabelsRead",
    "PairAgreement",
    "agreement",
    "agreement_report",
    "append_labels",
    "import_labels",
    "label_conflicts",
    "merged_labels",
    "read_labels",
]
