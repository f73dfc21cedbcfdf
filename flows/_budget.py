"""A run's budget (`budget:` in a config; `--max-cost-usd`, `--max-model-calls`): limits, and what was spent.

The limits are `llm.Budget`'s, checked before every model call. What the run has spent is kept in
`<run>/budget.json` and carried over when the run is started again, so a budget is the run's, not one
invocation's: a run stopped by `max_model_calls: 100` and started again with 150 makes at most 50 more
calls (cached stages and cached calls cost nothing, so it resumes where it stopped).

One ledger for every process of the run. When the run's stages can run in other processes — a Prefect
server they all reach (`PREFECT_API_URL`): stages on Dask workers, a sweep on a work pool — the
spending is counted on that server, in global concurrency limits named `aui-budget-<run key>-<scope>-…`
(`PrefectTally`; visible in the Prefect UI), and every process charges them before a call: the call
count is taken atomically by the server, so two workers can never both take the last call. The flow
writes the limits to `<run>/budget.json` before the first stage (run folders are on a path every
machine sees); a stage on a Dask worker reads them there and checks the same ledger
(`budget_for_stage`). Without a server others reach (the ephemeral one) the stages run in this
process, and so does the tally.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager, nullcontext, suppress
from pathlib import Path
from typing import Any, TypeVar

from llm import BUDGET_REACHED, Budget, RunBudget, Spent, budget_in_this_task, use_budget

BUDGET_FILE = "budget.json"
LEDGER = "prefect"
"""`budget.json`'s `ledger` when the spending is counted on the Prefect server."""
USD_UNIT = 100_000
"""Costs are counted on the server in units of $0.00001 (each call's cost rounded up: slots are integers)."""
MOST_SLOTS = 2**31 - 1
"""A limit's slots are a 32-bit integer on PostgreSQL: "no limit", and at most $21,474 per scope."""
R = TypeVar("R")


def read_json_object(path: Path) -> dict:
    """The JSON object in `path`, or {} (no file, not JSON, not an object)."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def read_budget_file(run_dir: Path) -> dict:
    """What `<run>/budget.json` holds (`spent`, `reached`, the limits last used, the ledger), or {} for none."""
    return read_json_object(Path(run_dir) / BUDGET_FILE)


def _write_budget_file(run_dir: Path, data: dict) -> None:
    path = Path(run_dir) / BUDGET_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = path.with_name(f".{BUDGET_FILE}.tmp")
    temp.write_text(json.dumps(data, indent=1), encoding="utf-8")
    temp.replace(path)


def shared_ledger_wanted() -> bool:
    """Whether other processes can reach this run's Prefect server (and so may run its stages)."""
    return bool(os.environ.get("PREFECT_API_URL"))


class PrefectTally:
    """The run's spending in Prefect global concurrency limits, per scope: `calls` (limited by the scope's
    `max_model_calls`: the server refuses a call past it), `usd` (counted; checked before a call) and
    `refused` (calls the server refused, in any process)."""

    UNITS = ("calls", "usd", "refused")

    def __init__(self, run_key: str, scopes: list[str]) -> None:
        self.run_key, self.scopes = run_key, list(scopes)

    def name(self, scope: str, unit: str) -> str:
        return f"aui-budget-{self.run_key}-{'run' if scope == '*' else scope}-{unit}"

    @classmethod
    async def open(cls, run_key: str, budget: RunBudget, spent: dict[str, Any]) -> PrefectTally:
        """The run's limits on the server, made or resized; their counts start from `spent` (budget.json) or
        from what the server already counted, whichever is more (an invocation that died kept counting there)."""
        from prefect.client.schemas.actions import GlobalConcurrencyLimitCreate, GlobalConcurrencyLimitUpdate

        tally = cls(run_key, ["*", *budget.roles])
        limits = {"*": budget, **budget.roles}
        async with _server() as client:
            counts = await tally._counts(client)
            for scope in tally.scopes:
                before = Spent.model_validate(spent.get(scope) or {})
                calls_limit = limits[scope].max_model_calls
                wanted = {"calls": (before.calls, MOST_SLOTS if calls_limit is None else calls_limit),
                          "usd": (_units(before.cost_usd), MOST_SLOTS), "refused": (0, MOST_SLOTS)}
                for unit, (active, limit) in wanted.items():
                    there = counts.get((scope, unit))
                    if there is None:
                        await client.create_global_concurrency_limit(GlobalConcurrencyLimitCreate(
                            name=tally.name(scope, unit), limit=limit, active_slots=min(active, MOST_SLOTS)))
                    else:
                        await client.update_global_concurrency_limit(tally.name(scope, unit), GlobalConcurrencyLimitUpdate(
                            limit=limit, active_slots=min(max(active, there.active_slots), MOST_SLOTS)))
        return tally

    async def _counts(self, client: Any, units: tuple[str, ...] = UNITS) -> dict[tuple[str, str], Any]:
        """(scope, unit) → its limit on the server (those that exist)."""
        from prefect.exceptions import ObjectNotFound

        found = {}
        for scope in self.scopes:
            for unit in units:
                with suppress(ObjectNotFound):
                    found[(scope, unit)] = await client.read_global_concurrency_limit_by_name(self.name(scope, unit))
        return found

    async def _increment(self, client: Any, names: list[str], slots: int) -> bool:
        """Add `slots` to every limit of `names` at once, or to none (False) when one would pass its limit."""
        import httpx

        try:
            await client.increment_concurrency_slots(names=names, slots=slots, mode="concurrency")
        except httpx.HTTPStatusError as error:
            if error.response.status_code in (422, 423):  # 423: a limit is full; 422: more slots than a limit
                return False
            raise
        return True

    async def take_call(self, limits: dict[str, int | None]) -> tuple[str, int] | None:
        scopes = [scope for scope in limits if scope in self.scopes]
        if not scopes:
            return None
        async with _server() as client:
            if await self._increment(client, [self.name(scope, "calls") for scope in scopes], 1):
                return None
            counts = await self._counts(client, ("calls",))
            for scope in scopes:  # which one refused: the first at its limit, in the budget's order
                limit = counts.get((scope, "calls"))
                if limit is not None and limit.active_slots >= limit.limit:
                    await self._increment(client, [self.name(scope, "refused")], 1)
                    return scope, limit.active_slots
        return None  # raised in between (a new invocation with a higher budget): nothing was counted, try on

    async def _read(self, *units: str) -> dict[tuple[str, str], Any]:
        async with _server() as client:
            return await self._counts(client, units)

    async def costs(self, scopes: list[str]) -> dict[str, float]:
        counts = await self._read("usd")
        return {scope: (counts[(scope, "usd")].active_slots if (scope, "usd") in counts else 0) / USD_UNIT
                for scope in scopes if scope in self.scopes}

    async def add_cost(self, scopes: list[str], cost_usd: float) -> None:
        names = [self.name(scope, "usd") for scope in scopes if scope in self.scopes]
        if names and _units(cost_usd) > 0:
            async with _server() as client:  # past $21,474 a scope stops counting (MOST_SLOTS)
                await self._increment(client, names, _units(cost_usd))

    async def spent(self) -> dict[str, Spent]:
        counts = await self._read("calls", "usd")
        return {scope: Spent(calls=getattr(counts.get((scope, "calls")), "active_slots", 0),
                             cost_usd=getattr(counts.get((scope, "usd")), "active_slots", 0) / USD_UNIT)
                for scope in self.scopes if (scope, "calls") in counts or (scope, "usd") in counts}

    async def refused(self) -> int:
        """Calls the server refused for this run, in every process."""
        return sum(limit.active_slots for limit in (await self._read("refused")).values())


def _server() -> Any:
    """A client of the run's Prefect server. Prefect loads here, not on import: `aui` reads budget.json at start."""
    from prefect.client.orchestration import get_client

    return get_client()


def _units(cost_usd: float) -> int:
    return math.ceil(round(cost_usd * USD_UNIT, 6))


@asynccontextmanager
async def run_budget(budget: RunBudget, run_dir: Path, run_key: str, shared: bool | None = None
                     ) -> AsyncIterator[Budget | None]:
    """The run's model calls under `budget` for the block, starting from what the run spent before; what is
    spent (and whether the budget was reached) is written to `<run>/budget.json` at the end, also when the
    block fails. `shared` (default: a server others reach, `shared_ledger_wanted`) keeps the spending on the
    Prefect server for every process of the run. No limits: no ledger, but this process's spending is recorded."""
    before = read_budget_file(run_dir)
    spent = before.get("spent") or {}
    shared = shared_ledger_wanted() if shared is None else shared
    tally = await PrefectTally.open(run_key, budget, spent) if shared and not budget.unlimited else None
    live = Budget(budget, budget.roles, spent=spent, tally=tally)
    limits = budget.model_dump(mode="json")
    if tally is not None:  # before the first stage: workers read the limits and the ledger here
        _write_budget_file(run_dir, {"limits": limits, "spent": spent, "reached": None, "ledger": LEDGER})
    previous = use_budget(live)
    try:
        yield live
    finally:
        use_budget(previous)
        spent_now = await live.spent()
        if tally is not None and live.reached is None and await tally.refused():
            live.note_reached(_reached_from(budget, spent_now))
        _write_budget_file(run_dir, {"limits": limits, "spent": spent_now, "reached": live.reached,
                                     **({"ledger": LEDGER} if tally is not None else {})})


def _reached_from(budget: RunBudget, spent: dict[str, dict]) -> str:
    """Why another process's call was refused, told from the counts (the first scope at its limit)."""
    for scope, limits in {"*": budget, **budget.roles}.items():
        made = Spent.model_validate(spent.get(scope) or {})
        name = "the run" if scope == "*" else f"role {scope!r}"
        if limits.max_model_calls is not None and made.calls >= limits.max_model_calls:
            return f"{name} has made {made.calls} of its {limits.max_model_calls} model calls"
        if limits.max_cost_usd is not None and made.cost_usd >= limits.max_cost_usd:
            return f"{name} has spent ${made.cost_usd:.4g} of its ${limits.max_cost_usd:.4g}"
    return "a limit was reached in another process"


def budget_for_stage(run: Any) -> Budget | None:
    """The budget a stage of `run` (its `RunContext`) checks in a process other than the flow's (a Dask worker):
    the run's limits from `<run>/budget.json` and its ledger on the Prefect server; None when it has none."""
    data = read_budget_file(Path(run.run_dir))
    if data.get("ledger") != LEDGER:
        return None
    limits = RunBudget.model_validate(data.get("limits") or {})
    return Budget(limits, limits.roles, tally=PrefectTally(run.run_key, ["*", *limits.roles]))


async def with_run_budget(run: Any, work: Callable[[], Awaitable[R]]) -> R:
    """`work()` with the run's budget for its model calls (on a Dask worker: `budget_for_stage`)."""
    budget = budget_for_stage(run) if run is not None else None
    with budget_in_this_task(budget) if budget is not None else nullcontext():
        return await work()


def budget_line(run_dir: Path) -> str | None:
    """`budget reached: …` when the run's last invocation stopped at its budget, else None."""
    reached = read_budget_file(run_dir).get("reached")
    if not reached:
        return None
    return (f"{BUDGET_REACHED}: {reached}; no further model calls were started, calls in flight finished and the "
            f"results hold what finished. Run again with a higher budget (--max-model-calls / --max-cost-usd) to resume")


def stopped_by_budget(error: str | None) -> bool:
    """Whether a rollout's error says its policy's model call was refused by the budget."""
    return bool(error) and f"BudgetReached: {BUDGET_REACHED}" in error
