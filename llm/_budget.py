"""A run's spending limits: model calls and dollars, in all and per role.

A budget is checked before a call is sent (after the cache: a cached reply is free and always
allowed). Once a limit is reached no new call starts; calls already in flight finish and are
counted, so the dollars spent may pass `max_cost_usd` by what those calls cost. What was spent is
kept (`spent()`), so a run stopped by its budget and started again with a higher one continues
from what it had spent, not from zero.

Where the spending is counted is the budget's `tally`: this process's (`LocalTally`), or a store that
every process making the run's calls charges (the flows keep one on the Prefect server, so that stages
on Dask workers or on several machines spend from one budget). A tally takes a call atomically — it
counts it only when no limit of the call's scopes is reached — so two processes can never both take the
last call. `llm` never imports Prefect: the flows hand their tally in.
"""

from __future__ import annotations

import contextlib
import contextvars
import re
import threading
from collections.abc import Iterator
from typing import Any, Protocol

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


class RunBudget(BudgetLimits):
    """The run's limits, and per role (`coder`, `proposer`, `verifier`, `commenter`, `cua`, `judge`, a
    commenter mode such as `commenter:dashboard`, or a model name for calls made by name)."""

    roles: dict[str, BudgetLimits] = Field(default_factory=dict, description="Limits per role.")

    @property
    def unlimited(self) -> bool:
        return super().unlimited and all(limits.unlimited for limits in self.roles.values())


class Spent(BaseModel):
    """What one scope spent: calls sent and their cost."""

    calls: int = 0
    cost_usd: float = 0.0


class BudgetReached(ModelCallError):
    """A model call was not sent because a budget limit was reached (never retried)."""


class BudgetTally(Protocol):
    """Where a budget counts what was spent, per scope (`"*"`, a role, a role's sub-label)."""

    async def take_call(self, limits: dict[str, int | None]) -> tuple[str, int] | None:
        """Count one call for every scope of `limits` (scope → its call limit, None: none) unless one of them
        has reached its limit; then count nothing and return (that scope, its calls so far). Atomic."""
        ...

    async def costs(self, scopes: list[str]) -> dict[str, float]:
        """Dollars spent so far by each of `scopes`."""
        ...

    async def add_cost(self, scopes: list[str], cost_usd: float) -> None:
        """Add what a call cost to each of `scopes`."""
        ...

    async def spent(self) -> dict[str, Spent]:
        """Every scope the tally keeps, with what it spent."""
        ...


class LocalTally:
    """This process's tally (thread-safe): every scope a call names is counted, limited or not."""

    def __init__(self, spent: dict[str, Any] | None = None) -> None:
        self._lock = threading.Lock()
        self._spent: dict[str, Spent] = {key: Spent.model_validate(value) for key, value in (spent or {}).items()}

    async def take_call(self, limits: dict[str, int | None]) -> tuple[str, int] | None:
        with self._lock:
            for key, limit in limits.items():
                calls = self._spent.get(key, Spent()).calls
                if limit is not None and calls >= limit:
                    return key, calls
            for key in limits:
                self._spent.setdefault(key, Spent()).calls += 1
        return None

    async def costs(self, scopes: list[str]) -> dict[str, float]:
        with self._lock:
            return {key: self._spent.get(key, Spent()).cost_usd for key in scopes}

    async def add_cost(self, scopes: list[str], cost_usd: float) -> None:
        with self._lock:
            for key in scopes:
                self._spent.setdefault(key, Spent()).cost_usd += cost_usd

    async def spent(self) -> dict[str, Spent]:
        with self._lock:
            return {key: value.model_copy() for key, value in self._spent.items()}


class Budget:
    """Limits for the run and per role, checked against what its tally says was spent.

    A call counts against the run and against its role: a call made for `commenter:dashboard`
    counts for the key `commenter:dashboard` and for `commenter`; one made by model name (the
    `openai-cua` policy's) for that name.
    """

    def __init__(self, run: BudgetLimits | None = None, roles: dict[str, BudgetLimits] | None = None,
                 spent: dict[str, Any] | None = None, tally: BudgetTally | None = None) -> None:
        self.run = run or BudgetLimits()
        self.roles = dict(roles or {})
        self.tally: BudgetTally = tally if tally is not None else LocalTally(spent)
        self.reached: str | None = None
        """Why the first call was refused, once one was (in this process; `note_reached` adds another's)."""

    async def spent(self) -> dict[str, dict[str, Any]]:
        """`{"*": {calls, cost_usd}, role: {...}}`: the run's total and each role's (to save and pass back in)."""
        return {key: value.model_dump() for key, value in (await self.tally.spent()).items()}

    def _keys(self, label: str) -> list[str]:
        return list(dict.fromkeys(("*", label, label.partition(":")[0])))

    def limits_of(self, key: str) -> BudgetLimits | None:
        return self.run if key == "*" else self.roles.get(key)

    def note_reached(self, error: str) -> None:
        """Another process refused a call of this run (a stage on a Dask worker; `error` is its message, or a
        message that holds it): no new round starts here either, and the run records why."""
        found = re.search(rf"{BUDGET_REACHED}: (.+?); call to model", error)
        self.reached = self.reached or (found.group(1) if found else error)

    async def start_call(self, label: str, model: str) -> None:
        """Count one call about to be sent for `label` (a role or model name).

        Raises:
            BudgetReached: a limit of the run or of the call's role is reached; nothing is counted.
        """
        keys = self._keys(label)
        priced = [key for key in keys if (limits := self.limits_of(key)) and limits.max_cost_usd is not None]
        for key, cost in (await self.tally.costs(priced)).items() if priced else ():
            limit = self.limits_of(key).max_cost_usd
            if cost >= limit:
                self._refuse(f"{_scope(key)} has spent ${cost:.4g} of its ${limit:.4g}", label, model)
        counted = {key: (limits.max_model_calls if (limits := self.limits_of(key)) else None) for key in keys}
        refused = await self.tally.take_call(counted)
        if refused is not None:
            key, calls = refused
            self._refuse(f"{_scope(key)} has made {calls} of its {counted[key]} model calls", label, model)

    def _refuse(self, why: str, label: str, model: str) -> None:
        self.reached = self.reached or why
        raise BudgetReached(f"{BUDGET_REACHED}: {why}; call to model {model!r} for {label!r} not sent",
                            model=model, endpoint="budget", retryable=False)

    async def add_cost(self, label: str, cost_usd: float) -> None:
        """Add what a call sent for `label` cost, once it is known."""
        if cost_usd > 0:
            await self.tally.add_cost(self._keys(label), cost_usd)


def _scope(key: str) -> str:
    return "the run" if key == "*" else f"role {key!r}"


_current: Budget | None = None
_in_this_task: contextvars.ContextVar[Budget | None] = contextvars.ContextVar("aui_task_budget", default=None)


def use_budget(budget: Budget | None) -> Budget | None:
    """Make `budget` the one every `ModelClient` of this process checks (None: no budget); returns the previous one."""
    global _current
    previous, _current = _current, budget
    return previous


@contextlib.contextmanager
def budget_in_this_task(budget: Budget | None) -> Iterator[None]:
    """Within the block (this asyncio task and those it starts), calls check `budget` instead of the process's:
    a worker process that runs stages of several runs gives each stage its own run's budget."""
    token = _in_this_task.set(budget)
    try:
        yield
    finally:
        _in_this_task.reset(token)


def current_budget() -> Budget | None:
    """The budget of this task (`budget_in_this_task`), else the one `use_budget` installed, if any."""
    return _in_this_task.get() or _current
