"""`verifier.judge`: judges of trajectories beside the checker: a model judge, an offline judge,
people's labels, and how far any two of them agree (the paper's Table 6, OSUniverse's validator–human check).

    refs = run_trajectories(run_dir)        # every trajectory of a finished run, with the checker's say
    judgements = await judge_run(run_dir, judge="offline")                  # the text-only baseline
    judgements = await judge_run(run_dir, judge="judge", mode="flow")       # the `judge` role's model
    read_judgements(run_dir)                # every line of judgements.jsonl (a line cut by a crash skipped)
    import_labels("labels.csv", run_dir)    # people's labels → labels.jsonl (validated, all or nothing)
    agreement_report(run_dir).pairs         # every two judges: n, agreement, Cohen's κ, balanced accuracy

The model judge (`ModelJudge`) sees the task, the expected outcome and the last screenshot
(`screenshot`) or the dashboard drawn without the checker's verdict (`flow`); its reply is validated
against `VERDICT_SCHEMA`, repaired once, else recorded as an error. The offline judge
(`OfflineJudge`, labelled offline) reads the final page's text (`Trajectory.final_text`) for the
expected outcome's facts — a baseline that can be wrong. Both are registered by name in `JUDGES`
('offline', 'model'), where `get_judge` looks them up, as every other provider is.
"""

from ._model import ModelJudge, VerdictError, last_screenshot, parse_verdict
from ._offline import (
    OFFLINE_JUDGE,
    OFFLINE_VERSION,
    SUCCESS_SHARE,
    FactCheck,
    OfflineJudge,
    OutcomeFacts,
    check_facts,
    outcome_facts,
)
from ._prompts import MODES, PROMPT_VERSION, VERDICT_SCHEMA, build_messages, prompt_sha256, system_prompt
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
from ._run import (
    DEFAULT_CONCURRENCY,
    JUDGES,
    MODEL_JUDGE,
    append_judgement,
    get_judge,
    judge_run,
    latest_judgements,
    read_judgements,
)

# People's labels and agreement between judges (issue 14, §2 agreement report and §3).
from ._agreement_report import (
    AGREEMENT_FILE,
    AgreementReport,
    ConfusionMatrix,
    JudgeSummary,
    PairAgreement,
    agreement,
    agreement_report,
)
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
    "DEFAULT_CONCURRENCY",
    "JUDGEMENTS_FILE",
    "JUDGES",
    "LABELS_FILE",
    "MODEL_JUDGE",
    "MODES",
    "OFFLINE_JUDGE",
    "OFFLINE_VERSION",
    "PROMPT_VERSION",
    "SUCCESS_SHARE",
    "VERDICT_SCHEMA",
    "FactCheck",
    "JudgeMode",
    "Judgement",
    "Label",
    "LabelValue",
    "ModelJudge",
    "OfflineJudge",
    "OutcomeFacts",
    "TrajectoryRef",
    "VerdictError",
    "append_judgement",
    "build_messages",
    "check_facts",
    "get_judge",
    "judge_run",
    "last_screenshot",
    "latest_judgements",
    "outcome_facts",
    "parse_verdict",
    "prompt_sha256",
    "read_judgements",
    "run_trajectories",
    "system_prompt",
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
