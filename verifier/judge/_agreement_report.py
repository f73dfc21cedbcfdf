"""Every pair of a run's judges compared: the checker, each model/offline judge, and the people.

The judges of a run folder:

- **checker**: the task's checker on trajectories whose task had a valid checker (from results.json;
  the others are not the checker's to decide);
- one judge per (judge, mode) found in `judgements.jsonl`, named `<judge> judge (<mode>)`; the last
  line for a trajectory wins (a re-judged trajectory appends a newer line); `success: null` is None;
- **human**: people's labels of `labels.jsonl`, merged (`merged_labels`); `unsure` is None.

The reference of a pair (the truth for balanced accuracy) is the first of the two in the order
human, checker, then the judges by name: so checker vs a model judge (the paper's Table 6) and
human vs checker (OSUniverse's validator vs human).
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from ._agreement import PairAgreement, agreement
from ._jsonl_log import read_records
from ._labels import LabelConflict, label_conflicts, merged_labels, read_labels
from ._records import JUDGEMENTS_FILE, LABELS_FILE, Judgement, run_trajectories

AGREEMENT_FILE = "agreement.json"
CHECKER = "checker"
HUMAN = "human"

JudgeKind = Literal["checker", "model", "offline", "human"]


class JudgeSummary(BaseModel):
    """One judge of the run and how much it decided."""

    name: str
    kind: JudgeKind
    decided: int = Field(description="Trajectories it called success or failure.")
    undecided: int = Field(description="Trajectories it saw and left None (unsure, no answer, an error).")


class AgreementReport(BaseModel):
    """The judges of a run and every pair of them compared (`agreement.json`)."""

    sources: list[str] = Field(default_factory=list, description="The judgement/label files found in the run folder.")
    judges: list[JudgeSummary] = Field(default_factory=list)
    pairs: list[PairAgreement] = Field(default_factory=list)
    label_conflicts: list[LabelConflict] = Field(default_factory=list, description="Trajectories people labelled both success and failure.")
    dashboards: dict[str, str] = Field(default_factory=dict, description=(
        "Dashboard (relative to the run folder) of each trajectory listed in a disagreement or a conflict."))
    problems: list[str] = Field(default_factory=list, description="Lines skipped or records ignored, each naming its file.")

    @property
    def empty(self) -> bool:
        """True when the run has neither judgements.jsonl nor labels.jsonl: nothing to compare."""
        return not self.sources


def agreement_report(run_dir: Path | str) -> AgreementReport:
    """Compare every two judges of a finished run (see the module docstring for who they are).

    Empty (no judges, no pairs) when the folder has neither judgements.jsonl nor labels.jsonl. Torn
    or invalid lines and records about trajectories not in the run are skipped and listed in
    `problems`, never fatal.

    Raises:
        FileNotFoundError / ValueError: judgements or labels exist but results.json is missing or not JSON.
    """
    run_dir = Path(run_dir)
    sources = [name for name in (JUDGEMENTS_FILE, LABELS_FILE) if (run_dir / name).is_file()]
    if not sources:
        return AgreementReport()
    refs = {ref.trajectory_id: ref for ref in run_trajectories(run_dir)}
    decisions: dict[str, dict[str, bool | None]] = {CHECKER: {t: r.checker_success for t, r in refs.items() if r.checker_valid}}
    kinds: dict[str, JudgeKind] = {CHECKER: "checker"}
    problems: list[str] = []

    judgements, skipped = read_records(run_dir / JUDGEMENTS_FILE, Judgement)
    problems += skipped
    judged: dict[str, dict[str, bool | None]] = {}
    for judgement in _in_run(judgements, refs, run_dir / JUDGEMENTS_FILE, problems):
        name = f"{judgement.judge} judge ({judgement.mode})"
        judged.setdefault(name, {})[judgement.trajectory_id] = judgement.success  # file order: the last line wins
        kinds[name] = "offline" if judgement.offline else "model"

    read = read_labels(run_dir)
    problems += read.problems
    labels = _in_run(read.labels, refs, run_dir / LABELS_FILE, problems)
    conflicts = label_conflicts(labels)
    if labels:
        merged = merged_labels(labels)
        decisions[HUMAN] = {t: None if value == "unsure" else value == "success" for t, value in merged.items()}
        kinds[HUMAN] = "human"
    decisions.update(sorted(judged.items()))

    order = [name for name in (HUMAN, CHECKER) if name in decisions] + sorted(judged)
    pairs = [agreement(decisions[reference], decisions[other], reference, other)
             for index, reference in enumerate(order) for other in order[index + 1:]]
    listed = {t for pair in pairs for t in pair.disagreements} | {c.trajectory_id for c in conflicts}
    return AgreementReport(
        sources=sources,
        judges=[JudgeSummary(name=name, kind=kinds[name], decided=sum(v is not None for v in decisions[name].values()),
                             undecided=sum(v is None for v in decisions[name].values())) for name in order],
        pairs=pairs,
        label_conflicts=conflicts,
        dashboards={t: refs[t].dashboard for t in sorted(listed) if refs[t].dashboard},
        problems=problems,
    )


def _in_run(records: list, refs: dict, path: Path, problems: list[str]) -> list:
    """The records about trajectories of the run; one problem line for the others (they are ignored)."""
    unknown = sorted({record.trajectory_id for record in records if record.trajectory_id not in refs})
    if unknown:
        problems.append(f"{path}: {len(unknown)} trajectory id(s) not in this run's results.json ignored "
                        f"(e.g. '{unknown[0]}')")
    return [record for record in records if record.trajectory_id in refs]
