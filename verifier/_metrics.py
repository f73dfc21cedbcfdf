"""Function Completeness (design.md §4) and the one rule Success Rate shares with it.

FC = tasks with a valid checker / all tasks (the paper's); FC (proven) = tasks whose checker was
proven (true after replaying its solution) / all tasks. SR is over all tasks (the paper's) and,
with `success_rate_proven`, over the proven tasks only. Counts are pooled (per domain and
overall we add up tasks, not average app rates), as the paper counts 1,560 tasks. For SR a task without a
valid checker is a CUA failure whatever the rollout did: `success_outcomes` applies that.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from pydantic import BaseModel, Field, computed_field

from ._verdicts import AppVerdicts


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
