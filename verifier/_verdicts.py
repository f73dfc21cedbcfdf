"""The verifier's output: one verdict per task, collected per app version in `verdicts.json`, and what is
counted from it: Function Completeness (design.md §4) and the one rule Success Rate shares with it.

FC = tasks with a valid checker / all tasks (the paper's); FC (proven) = tasks whose checker was
proven (true after replaying its solution) / all tasks. SR is over all tasks (the paper's) and,
with `success_rate_proven`, over the proven tasks only. Counts are pooled (per domain and
overall we add up tasks, not average app rates), as the paper counts 1,560 tasks. For SR a task without a
valid checker is a CUA failure whatever the rollout did: `success_outcomes` applies that.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, computed_field, model_validator

from apps_prompts import AnswerCheck, Check, SolutionStep
from cua import write_atomic

from ._checker import CheckerKind
from ._gate import GateResult
from ._proof import ProofStatus

VERDICTS_FILE = "verdicts.json"
OFFLINE = "offline"
"""The verifier label of the offline path (the spec's reference checkers through the gate)."""


JUDGE_CHECK_REASON = "a model judge decides after the rollout; there is nothing to replay before it"


class VerdictCheck(BaseModel):
    """One of a task's further checks (beside its DOM checker), as the verifier left it for scoring.

    Every check listed is well formed (an answer check the verifier sent malformed is dropped, with
    the reason in the verdict's warnings). `proof` is "proven" for an answer check whose expected
    answer was readable on the page after the solution's replay, "claimed" otherwise; a judge check
    (final_screenshot / flow) is always "claimed": a model decides it after the rollout.
    """

    check: Check
    proof: Literal["proven", "claimed"] = "claimed"
    proof_reason: str = ""
    source: Literal["spec", "verifier"] = Field(
        default="spec", description="Where the check came from: the task (spec or tasks file) or the verifier model.")

    @property
    def kind(self) -> str:
        return self.check.kind

    @property
    def proven(self) -> bool:
        return self.proof == "proven"


class Verdict(BaseModel):
    """Whether the app supports one task, and the checks that will judge the agent on it.

    `checker` is set only when the checker passed the gate: it is the JS body rollouts run.
    A rejected attempt stays visible in `checker_source` and `gate` for whoever reads the record.
    `checks` are the task's further checks (an answer, a model judge), scored after the rollout;
    the task passes only when its checker (if any) and all of them pass.

    `proof` says how far the task's checks are trusted: "proven" (the checker false at load and
    true after replaying `solution` on a fresh page, and any answer check's expected answer
    readable on the page after it), "claimed" (valid, not proven) or "unsupported" (nothing valid
    to judge the task by). A task without a DOM checker is valid when it has an answer check (the
    paper's FC counts tasks with a valid checker; an answer check is such a task's checker). Judge
    checks cannot be proven before a rollout and do not lower the task's proof. A verdict written
    before proofs existed loads as "claimed" or "unsupported" by its validity; one written before
    further checks existed loads with `checks` empty.
    """

    task_id: str
    solvable: bool = Field(description="Final: the verifier said solvable AND the checker passed the gate.")
    checker: str | None = Field(default=None, description="The gated JS body the runtime runs; None when invalid.")
    checker_source: str | None = Field(default=None, description="The checker as the verifier wrote it (JS or rule).")
    checker_kind: CheckerKind | None = None
    gate: GateResult | None = Field(default=None, description="The gate's decision on the last checker tried.")
    reasons: list[str] = Field(default_factory=list, description="The verifier's reason, then any gate failures.")
    warnings: list[str] = Field(default_factory=list)
    model: str = Field(description="Registry model name that judged, or 'offline'.")
    offline: bool = False
    tokens: int = Field(default=0, description="This task's share of its batch's tokens (even split).")
    repairs: int = Field(default=0, description="Repair round-trips spent on this task, for the gate or the proof (0 or 1).")
    proof: ProofStatus = Field(
        default="unsupported",
        description="proven: true after replaying `solution`; claimed: passed the gate, not proven; unsupported: no valid checker.",
    )
    proof_reason: str = Field(default="", description="Why the proof is what it is (the failed step, the checker's value).")
    solution: list[SolutionStep] = Field(default_factory=list, description="The steps replayed to prove the checker.")
    static_warnings: list[str] = Field(
        default_factory=list, description="Why the checker looks like it can never be true (a static reading; not a proof)."
    )
    checks: list[VerdictCheck] = Field(
        default_factory=list, description="The task's further checks (answer, judge), each with its proof; scored after the rollout.")

    @model_validator(mode="after")
    def _proof_agrees_with_validity(self) -> "Verdict":
        if "proof" not in self.model_fields_set:  # built without a proof, or read from an older file
            self.proof = "claimed" if self.valid else "unsupported"
            if not self.proof_reason:
                self.proof_reason = "no solution was replayed" if self.valid else "no checker passed the gate"
        elif (self.proof == "unsupported") == self.valid:
            what = ("a checker that passed the gate" if self.checker_valid else "a valid answer check" if self.valid
                    else "a checker that did not pass the gate (and no answer check in its place)")
            raise ValueError(f"task '{self.task_id}': proof '{self.proof}' contradicts {what}")
        kinds = [c.kind for c in self.checks]
        if len(set(kinds)) < len(kinds) or "dom" in kinds:
            raise ValueError(f"task '{self.task_id}': checks {kinds} — at most one of each kind, and the DOM checker "
                             "belongs in `checker`")
        if self.proof == "proven" and any(c.kind == "answer" and not c.proven for c in self.checks):
            raise ValueError(f"task '{self.task_id}': proof 'proven' contradicts an answer check that was not proven")
        return self

    @property
    def checker_valid(self) -> bool:
        """Has a DOM checker that passed the gate (what rollouts run after every step)."""
        return self.solvable and self.checker is not None and self.gate is not None and self.gate.accepted

    @property
    def valid(self) -> bool:
        """Counts towards Function Completeness (the paper's): a checker that passed the gate, or — for a task
        without a DOM checker — an answer check (well formed: a malformed one is never kept)."""
        return self.checker_valid or (self.solvable and self.checker is None and self.checker_source is None
                                      and self.gate is None and self.answer_check is not None)

    @property
    def proven(self) -> bool:
        """Valid, the checker (if any) true after replaying its solution and the answer (if any) readable
        on the page after it: counts towards FC (proven)."""
        return self.proof == "proven" and self.valid

    @property
    def answer_check(self) -> AnswerCheck | None:
        """The answer check the agent's final answer is scored against, or None."""
        return next((c.check for c in self.checks if isinstance(c.check, AnswerCheck)), None)

    @property
    def reason(self) -> str:
        return "; ".join(self.reasons)


class TokenTotals(BaseModel):
    prompt_tokens: int = 0
    completion_tokens: int = 0
    calls: int = 0
    cached_calls: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


class AppVerdicts(BaseModel):
    """Every task's verdict for one app version, in the spec's task order."""

    app_id: str
    domain: str
    html_sha256: str = Field(description="Which app version was judged.")
    verifier: str = Field(description="'offline' or the registry model name.")
    offline: bool
    prompt_version: str | None = Field(default=None, description="The verifier prompt's version (model verifiers).")
    verdicts: list[Verdict]
    tokens: TokenTotals = Field(default_factory=TokenTotals)
    elapsed_s: float = 0.0

    @computed_field  # written to verdicts.json so a reader needs no code to see it
    @property
    def function_completeness(self) -> float:
        """Tasks with a valid checker / all tasks (0.0 for an app without tasks)."""
        return function_completeness(self).value

    @computed_field
    @property
    def function_completeness_proven(self) -> float:
        """Tasks with a proven checker / all tasks (0.0 for an app without tasks)."""
        return function_completeness_proven(self).value

    def verdict(self, task_id: str) -> Verdict:
        """The verdict of one task; raises KeyError naming the known ids."""
        for verdict in self.verdicts:
            if verdict.task_id == task_id:
                return verdict
        raise KeyError(f"app '{self.app_id}' has no verdict for task '{task_id}' (known: {', '.join(self.task_ids())})")

    def task_ids(self) -> list[str]:
        return [v.task_id for v in self.verdicts]

    def checkers(self) -> dict[str, str]:
        """Task id → gated JS checker, for the tasks with a valid checker only (what rollouts run)."""
        return {v.task_id: v.checker for v in self.verdicts if v.valid and v.checker is not None}

    def answer_checks(self) -> dict[str, AnswerCheck]:
        """Task id → the answer check its final answer is scored against, for the valid tasks that have one."""
        return {v.task_id: v.answer_check for v in self.verdicts if v.valid and v.answer_check is not None}

    def unsupported(self) -> dict[str, str]:
        """Task id → why it has no valid checker (the input of the `unsupported` revision mode)."""
        return {v.task_id: v.reason or "no valid checker" for v in self.verdicts if not v.valid}


def html_sha256(html: str | bytes) -> str:
    data = html.encode("utf-8") if isinstance(html, str) else html
    return hashlib.sha256(data).hexdigest()


def write_verdicts(verdicts: AppVerdicts, out_dir: Path | str) -> Path:
    """Write `out_dir/verdicts.json` atomically (a reader sees the old file or the whole new one)."""
    payload = verdicts.model_dump_json(indent=2).encode("utf-8") + b"\n"
    return write_atomic(Path(out_dir) / VERDICTS_FILE, payload)


def read_verdicts(path: Path | str) -> AppVerdicts:
    """Read a `verdicts.json` (or the one inside the folder `path`)."""
    path = Path(path) / VERDICTS_FILE if Path(path).is_dir() else Path(path)
    return AppVerdicts.model_validate_json(path.read_text(encoding="utf-8"))


class Rate(BaseModel):
    """A fraction that keeps its counts, so rates can be pooled and shown as `7/10`."""

    numerator: int = 0
    denominator: int = 0

    @computed_field
    @property
    def value(self) -> float:
        """numerator / denominator, 0.0 when there is nothing to count."""
        return round(self.numerator / self.denominator, 6) if self.denominator else 0.0

    def __add__(self, other: "Rate") -> "Rate":
        return Rate(numerator=self.numerator + other.numerator, denominator=self.denominator + other.denominator)

    def __str__(self) -> str:
        return f"{self.value:.1%} ({self.numerator}/{self.denominator})"


class CompletenessSummary(BaseModel):
    """FC per app, per domain and overall; beside each, FC over proven checkers only."""

    per_app: dict[str, Rate] = Field(default_factory=dict)
    per_domain: dict[str, Rate] = Field(default_factory=dict)
    overall: Rate = Field(default_factory=Rate)
    per_app_proven: dict[str, Rate] = Field(default_factory=dict)
    per_domain_proven: dict[str, Rate] = Field(default_factory=dict)
    overall_proven: Rate = Field(default_factory=Rate)


def function_completeness(verdicts: AppVerdicts) -> Rate:
    """FC of one app version (the paper's): tasks with a checker that passed the gate / all tasks."""
    return Rate(numerator=sum(v.valid for v in verdicts.verdicts), denominator=len(verdicts.verdicts))


def function_completeness_proven(verdicts: AppVerdicts) -> Rate:
    """FC (proven) of one app version: tasks whose checker turned true after its solution / all tasks."""
    return Rate(numerator=sum(v.proven for v in verdicts.verdicts), denominator=len(verdicts.verdicts))


def completeness_summary(apps: Iterable[AppVerdicts]) -> CompletenessSummary:
    """FC and FC (proven) per app, per domain (pooled over that domain's tasks) and overall (pooled)."""
    summary = CompletenessSummary()
    for app in apps:
        rate, proven = function_completeness(app), function_completeness_proven(app)
        _pool(summary.per_app, app.app_id, rate)
        _pool(summary.per_domain, app.domain, rate)
        summary.overall = summary.overall + rate
        _pool(summary.per_app_proven, app.app_id, proven)
        _pool(summary.per_domain_proven, app.domain, proven)
        summary.overall_proven = summary.overall_proven + proven
    summary.per_domain = dict(sorted(summary.per_domain.items()))
    summary.per_domain_proven = dict(sorted(summary.per_domain_proven.items()))
    return summary


def _pool(rates: dict[str, Rate], key: str, rate: Rate) -> None:
    rates[key] = rates.get(key, Rate()) + rate


def success_outcomes(verdicts: AppVerdicts, succeeded: Mapping[str, bool]) -> dict[str, bool]:
    """Task id → counted as a CUA success, for every task of the app.

    A task succeeds only if it has a valid checker AND `succeeded` says its checker turned true
    during the rollout; a task without a valid checker, or with no rollout, is a failure.
    """
    return {v.task_id: bool(v.valid and succeeded.get(v.task_id, False)) for v in verdicts.verdicts}


def success_rate(verdicts: AppVerdicts, succeeded: Mapping[str, bool]) -> Rate:
    """SR of one app version: successes / all tasks (tasks without a valid checker are failures)."""
    outcomes = success_outcomes(verdicts, succeeded)
    return Rate(numerator=sum(outcomes.values()), denominator=len(outcomes))


def success_rate_proven(verdicts: AppVerdicts, succeeded: Mapping[str, bool]) -> Rate:
    """SR over the proven tasks only: proven tasks whose checker turned true / proven tasks.

    A judge that cannot be wrong about solvability: a task whose checker was never shown able to
    turn true is left out, rather than counted as the agent's failure.
    """
    proven = [v.task_id for v in verdicts.verdicts if v.proven]
    return Rate(numerator=sum(bool(succeeded.get(task_id, False)) for task_id in proven), denominator=len(proven))
