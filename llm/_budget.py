"""A run's spending limits: model calls and dollars, in all and per role.

A budget is checked before a call is sent (after the cache: a cached reply is free and always
allowed). Once a limit is reached no new call starts; calls already in flight finish and are
counted, so the dollars spent may pass `max_cost_usd` by what those calls cost. What was spent is
kept (`spent()`), so a run stopped by its budget and started again with a higher one continues
from what it had spent, not from zero.
"""

from __future__ import annotations

import threading
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ._results import ModelCallError

BUDGET_REACHED = "budget reached"
"""How every message about a reached budget starts (the CLI's line, the stages' errors)."""


class BudgetLimits(BaseModel):
    """Limits of one scope (the whole run, or one role); None is no limit."""

    model_config = ConfigDict(extra="forbid")

    max_model_calls: int | None = Field(default=None, ge=0, description="Model calls sent (cache hits are free).")
    max_cost_usd: float | None = Field(default=None, ge=0, description="Dollars spent at the models' prices.")

    @property
    def unlimited(self) -> bool:
        return self.max_model_calls is None and self.max_cost_usd is None


class Spent(BaseModel):
    """What one scope spent: calls sent and their cost."""

    calls: int = 0
    cost_usd: float = 0.0


class BudgetReached(ModelCallError):
    """A model call was not sent because a budget limit was reached (never retried)."""


class Budget:
    """Limits for the run and per role, and what has been spent against them (thread-safe).

    A call counts against the run and against its role: a call made for `commenter:dashboard`
    counts for the key `commenter:dashboard` and for `commenter`; one made by model name (the
    `openai-cua` policy's) for that name.
    """

    def __init__(self, run: BudgetLimits | None = None, roles: dict[str, BudgetLimits] | None = None,
                 spent: dict[str, Any] | None = None) -> None:
        self.run = run or BudgetLimits()
        self.roles = dict(roles or {})
        self._lock = threading.Lock()
        self._spent: dict[str, Spent] = {key: Spent.model_validate(value) for key, value in (spent or {}).items()}
        self.reached: str | None = None
        """Why the first call was refused, once one was."""

    @property
    def unlimited(self) -> bool:
        return self.run.unlimited and all(limits.unlimited for limits in self.roles.values())

    def spent(self) -> dict[str, dict[str, Any]]:
        """`{"*": {calls, cost_usd}, role: {...}}`: the run's total and each role's (to save and pass back in)."""
        with self._lock:
            return {key: value.model_dump() for key, value in self._spent.items()}

    def _keys(self, label: str) -> list[str]:
        return list(dict.fromkeys(("*", label, label.partition(":")[0])))

    def start_call(self, label: str, model: str) -> None:
        """Count one call about to be sent for `label` (a role or model name).

        Raises:
            BudgetReached: a limit of the run or of the call's role is reached; nothing is counted.
        """
        with self._lock:
            for key in self._keys(label):
                limits = self.run if key == "*" else self.roles.get(key)
                if limits is None:
                    continue
                spent = self._spent.get(key, Spent())
                scope = "the run" if key == "*" else f"role {key!r}"
                why = None
                if limits.max_model_calls is not None and spent.calls >= limits.max_model_calls:
                    why = f"{scope} has made {spent.calls} of its {limits.max_model_calls} model calls"
                elif limits.max_cost_usd is not None and spent.cost_usd >= limits.max_cost_usd:
                    why = f"{scope} has spent ${spent.cost_usd:.4g} of its ${limits.max_cost_usd:.4g}"
                if why is not None:
                    self.reached = self.reached or why
                    raise BudgetReached(f"{BUDGET_REACHED}: {why}; call to model {model!r} for {label!r} not sent",
                                        model=model, endpoint="budget", retryable=False)
            for key in self._keys(label):
                self._spent.setdefault(key, Spent()).calls += 1

    def add_cost(self, label: str, cost_usd: float) -> None:
        """Add what a call sent for `label` cost, once it is known."""
        if cost_usd <= 0:
            return
        with self._lock:
            for key in self._keys(label):
                self._spent.setdefault(key, Spent()).cost_usd += cost_usd


_current: Budget | None = None


def use_budget(budget: Budget | None) -> Budget | None:
    """Make `budget` the one every `ModelClient` of this process checks (None: no budget); returns the previous one."""
    global _current
    previous, _current = _current, budget
    return previous


def current_budget() -> Budget | None:
    """The budget `use_budget` installed, if any."""
    return _current
