"""What a rollout is judged by: the checker it runs after every step (`rollout_checker`, one route for
all callers), and its score against every check of its task (OSUniverse's rule: all of them must pass).

- dom: the checker turned true after some step (it ran after every step; `Trajectory.success`, or
  the recorded step results when the rollout went on to collect an answer);
- answer: the agent's final answer against the expected value (`match_answer`);
- final_screenshot / flow: a judge's verdict against the task's expected outcome — the model judge
  (`verifier.judge.ModelJudge`), or offline the text judge for final_screenshot; the flow kind needs
  a model (it reads the dashboard) and is refused offline before a run starts.

A check that could not be judged (no answer, a judge's error) fails, with its reason.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from apps_prompts import AnswerCheck, Check, JudgeCheck
from cua import Trajectory

from ._answers import match_answer

CheckKind = Literal["dom", "answer", "final_screenshot", "flow"]


class CheckOutcome(BaseModel):
    kind: CheckKind
    passed: bool
    reason: str = ""
    judge: str | None = Field(default=None, description="Who judged a final_screenshot / flow check ('offline' or a model).")


class TaskScore(BaseModel):
    """A rollout's result over all its task's checks."""

    passed: bool
    checks: list[CheckOutcome] = Field(default_factory=list)
    answer: str | None = Field(default=None, description="The agent's final answer, if it gave one.")

    @property
    def failed_checks(self) -> list[CheckOutcome]:
        return [check for check in self.checks if not check.passed]


def dom_passed(trajectory: Trajectory) -> bool:
    """The checker was true after some step (the rollout may have gone on to collect an answer)."""
    return trajectory.success or any(step.checker_passed for step in trajectory.steps)


async def score_rollout(trajectory: Trajectory, *, has_checker: bool, checks: list[Check] | None = None,
                        judges: dict[str, object] | None = None, run_dir: Path | None = None,
                        trajectory_id: str | None = None, round_: int = 0, cua: str = "") -> TaskScore:
    """Every check of the task on this rollout. `judges` maps a judge check's kind to a judge
    (`verifier.judge.get_judge(...)`), which reads the trajectory at `run_dir / trajectory_id`."""
    outcomes: list[CheckOutcome] = []
    if has_checker:
        passed = dom_passed(trajectory)
        outcomes.append(CheckOutcome(kind="dom", passed=passed, reason="the checker turned true" if passed else
                                     f"the checker never turned true (ended: {trajectory.termination.value if trajectory.termination else 'unfinished'})"))
    for check in checks or []:
        if isinstance(check, AnswerCheck):
            result = match_answer(trajectory.answer, check)
            outcomes.append(CheckOutcome(kind="answer", passed=result.passed, reason=result.reason))
        elif isinstance(check, JudgeCheck):
            outcomes.append(await _judged(check, trajectory, judges or {}, run_dir, trajectory_id, round_, cua, has_checker))
    return TaskScore(passed=bool(outcomes) and all(o.passed for o in outcomes), checks=outcomes, answer=trajectory.answer)


async def _judged(check: JudgeCheck, trajectory: Trajectory, judges: dict[str, object], run_dir: Path | None,
                  trajectory_id: str | None, round_: int, cua: str, has_checker: bool) -> CheckOutcome:
    from .judge import TrajectoryRef

    judge = judges.get(check.kind)
    if judge is None or run_dir is None or trajectory_id is None:
        return CheckOutcome(kind=check.kind, passed=False, reason=f"no judge for a {check.kind} check was given")
    ref = TrajectoryRef(trajectory_id=trajectory_id, app_id=trajectory.app_id, task_id=trajectory.task_id, round=round_,
                        cua=cua, checker_valid=has_checker, checker_success=dom_passed(trajectory))
    judgement = await judge.judge(ref, run_dir)
    if judgement.success is None:
        return CheckOutcome(kind=check.kind, passed=False, judge=judgement.judge,
                            reason=f"the judge gave no usable verdict: {judgement.error or 'no answer'}")
    return CheckOutcome(kind=check.kind, passed=bool(judgement.success), judge=judgement.judge,
                        reason=judgement.reason or ("success" if judgement.success else "failure"))
