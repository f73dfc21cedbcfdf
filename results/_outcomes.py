"""What one app version scored: its tasks' outcomes, repeats and variations, and the track it belongs to.

These are the records of a run folder's `results.json` ("apps"), written by the flows and read by the
viewer, the benchmarks and the CLI.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from apps_prompts import Domain
from verifier import CheckOutcome

from ._format import track_text

DOMAINS = [d.value for d in Domain]


def share(part: int, whole: int) -> float:
    """part / whole, 0 for no whole (a cell without tasks scores 0, and the tables say how many tasks)."""
    return part / whole if whole else 0.0


class Track(BaseModel):
    """One coder × CUA × revision mode × commenter mode: an app's versions after round 0 belong to one track."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    coder: str
    cua: str
    mode: str
    commenter_mode: str | None = Field(default=None, description="What the commenter sees; None for the "
                                       "`unsupported` mode, which revises from the verifier's reasons alone.")

    @property
    def folder(self) -> Path:
        """Where this track's versions and feedback live under `apps/<app>/` (no ':' in folder names)."""
        parts = (self.coder, self.cua, self.mode, *([self.commenter_mode] if self.commenter_mode else []))
        return Path(*(part.replace(":", "-") for part in parts))

    def __str__(self) -> str:
        return track_text((self.coder, self.cua, self.mode, self.commenter_mode))


class TaskOutcome(BaseModel):
    task_id: str
    solvable: bool
    checker_valid: bool
    proof: Literal["proven", "claimed", "unsupported"] | None = Field(default=None, description=(
        "proven: the checker is false at load and true after its reference solution; claimed: it passed the "
        "load gate only; unsupported: no valid checker. None: not verified (or a run from before proofs)."))
    proof_reason: str | None = None
    success: bool = False
    termination: str | None = None
    steps: int = 0
    trajectory: str | None = Field(default=None, description="Trajectory folder, relative to the run folder.")
    dashboard: str | None = None
    trace: str | None = Field(default=None, description="Playwright trace.zip of the rollout (see `trace`), relative to the run folder.")
    reason: str | None = Field(default=None, description="Why unsolvable, or the rollout's error.")
    level: str | None = Field(default=None, description="The task's level (paper … gold), None without one.")
    checks: list[CheckOutcome] = Field(default_factory=list, description="Each check's result (dom, answer, judge).")
    answer: str | None = Field(default=None, description="The agent's final answer, if it gave one.")
    failure_modes: list[str] = Field(default_factory=list, description=(
        "How the rollout went wrong (`cua.failure_modes`: action_loop, invalid_action, stuck, max_steps, finished_early, "
        "decoy, left_app, wrong_answer)."))

    @property
    def passed(self) -> bool:
        """Counted as a success: every check passed, and the task had a valid checker (the paper's SR)."""
        return self.success and self.checker_valid


class RepeatOutcomes(BaseModel):
    """The same app version's tasks rolled out again (repeat ≥ 1, its own seed)."""

    repeat: int = Field(ge=1)
    tasks: list[TaskOutcome] = Field(default_factory=list)


class _Repeated:
    """What a version's outcomes in one look share: repeat 0's `tasks` and the further `repeats`."""

    def every_repeat(self) -> list[tuple[int, list[TaskOutcome]]]:
        """(repeat, its task outcomes) for repeat 0 (`tasks`) and every further repeat."""
        return [(0, self.tasks)] + [(r.repeat, r.tasks) for r in self.repeats]

    @property
    def sr(self) -> float:
        """Successes / tasks (repeat 0)."""
        return share(sum(t.passed for t in self.tasks), len(self.tasks))


class _OneTrack:
    """A row of one track (coder, CUA, revision mode, commenter mode): its key for grouping and sorting."""

    @property
    def track_key(self) -> tuple[str, str, str, str]:
        return (self.coder, self.cua, self.mode, self.commenter_mode or "")


class VariationResult(_Repeated, BaseModel):
    """The version's tasks in another variation (OpenApps' axis): the proven variant's kept tasks, rolled out."""

    variation: str
    transform: str | None = Field(default=None, description="The transform's recorded name (with its seed).")
    transform_sha256: str | None = None
    kept: list[str] = Field(default_factory=list, description="Tasks the variant keeps (proven on it, or unproven "
                            "for want of a reference solution).")
    unproven: list[str] = Field(default_factory=list, description="Kept tasks that have no reference solution to replay.")
    excluded: dict[str, str] = Field(default_factory=dict, description="Task id → why the variant breaks it.")
    tasks: list[TaskOutcome] = Field(default_factory=list, description="Repeat 0's outcomes of the kept tasks.")
    repeats: list[RepeatOutcomes] = Field(default_factory=list)
    proof: str | None = Field(default=None, description="The variant's proof.json, relative to the run folder.")
    screenshot: str | None = Field(default=None, description="The variant at load (a rollout's first screenshot).")
    error: str | None = Field(default=None, description="Why the variant could not be made (then nothing was rolled out).")


class GamingSuspect(BaseModel):
    """A task that flipped to success after a revision that changed what its checker reads but no code that writes it."""

    task_id: str
    reason: str
    planted_text: list[str] = Field(default_factory=list)


class AppRoundResult(_Repeated, _OneTrack, BaseModel):
    """One app version judged by one CUA."""

    app_id: str
    domain: str
    coder: str
    cua: str
    mode: str
    commenter_mode: str | None = Field(default=None, description="What the commenter saw (None: the track does not comment).")
    round: int
    html: str = Field(description="The app version's HTML, relative to the run folder.")
    html_sha: str
    screenshot: str | None = None
    tasks: list[TaskOutcome] = Field(default_factory=list)
    contract: dict | None = Field(default=None, description="Non-regression outcome of the revision that made this version.")
    revised_from: int | None = Field(default=None, description="The round whose version this one revises (carry: best "
                                     "may go back to an earlier round); None for round 0 and kept versions.")
    regressions: list[str] = Field(default_factory=list, description="Tasks that succeeded in the previous round and fail in this one.")
    gaming_suspects: list[GamingSuspect] = Field(default_factory=list, description=(
        "Tasks that flipped to success with this version although its revision changed only the markup their checker "
        "reads, not the code that writes it (`verifier.audit_revision`, a static audit)."))
    offline_roles: list[str] = Field(default_factory=list)
    repeats: list[RepeatOutcomes] = Field(default_factory=list, description=(
        "Repeats 1…N−1 of this version's rollouts (`repeats: N`); `tasks` is repeat 0."))
    variations: list[VariationResult] = Field(default_factory=list, description=(
        "The same version in every other variation of the run (`variations:`); `tasks` is the default look."))
    errors: list[str] = Field(default_factory=list, description=(
        "Model stages that failed for good (after their retries) and degraded this round: its "
        "verification, or the commenting/revision that should have made this version (then the "
        "previous version is kept), or for a round that could not be judged at all, the first "
        "version or the task list."))

    @property
    def fc(self) -> float:
        return share(sum(t.checker_valid for t in self.tasks), len(self.tasks))

    @property
    def fc_proven(self) -> float | None:
        """Proven checkers / all tasks; None when the verdicts say nothing of proofs (an older run)."""
        if not any(t.proof for t in self.tasks):
            return None
        return share(sum(t.proof == "proven" for t in self.tasks), len(self.tasks))

    @property
    def track(self) -> Track:
        return Track(coder=self.coder, cua=self.cua, mode=self.mode, commenter_mode=self.commenter_mode or None)


def revised_pairs(results: list[AppRoundResult]) -> list[tuple[AppRoundResult, AppRoundResult]]:
    """(version made, version revised) for every round ≥ 1 revised from a judged version, in a stable order.

    Read by the design insights (`insights`) and the dataset export's revisions table alike."""
    by_key = {(r.app_id, r.track_key, r.round): r for r in results}
    pairs = []
    for result in sorted(results, key=lambda r: (r.app_id, r.track_key, r.round)):
        if result.round == 0 or not result.html:
            continue
        source = result.revised_from if result.revised_from is not None else result.round - 1
        before = by_key.get((result.app_id, result.track_key, source))
        if before is None and source == 0:  # round 0 is shared by the tracks of one coder: any of them
            before = next((r for r in results if r.app_id == result.app_id and r.round == 0 and r.coder == result.coder
                           and r.html), None)
        if before is not None and before.html:
            pairs.append((result, before))
    return pairs
