"""A run's budget (`budget:` in a config; `--max-cost-usd`, `--max-model-calls`): limits, and what was spent.

The limits are `llm.Budget`'s, checked before every model call of the process running the stages.
What the run has spent is kept in `<run>/budget.json` and carried over when the run is started
again, so a budget is the run's, not one invocation's: a run stopped by `max_model_calls: 100`
and started again with 150 makes at most 50 more calls (cached stages and cached calls cost
nothing, so it resumes where it stopped).

Under the Dask task runner the stages run in the workers' processes, which do not see this
budget: there it is not enforced (the run says so before it starts).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from experiment import RunBudget
from llm import BUDGET_REACHED, Budget, BudgetLimits, use_budget

BUDGET_FILE = "budget.json"


def read_budget_file(run_dir: Path) -> dict:
    """What `<run>/budget.json` holds (`spent`, `reached`, the limits last used), or {} for none."""
    try:
        data = json.loads((Path(run_dir) / BUDGET_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


@contextmanager
def run_budget(budget: RunBudget, run_dir: Path) -> Iterator[Budget | None]:
    """This process's model calls under `budget` for the block, starting from what the run spent
    before; what is spent (and whether the budget was reached) is written to `<run>/budget.json`
    at the end, also when the block fails. No limits: no budget, but spending is still recorded."""
    before = read_budget_file(run_dir)
    limits = BudgetLimits(max_model_calls=budget.max_model_calls, max_cost_usd=budget.max_cost_usd)
    live = Budget(limits, budget.roles, spent=before.get("spent") or {})
    previous = use_budget(live)
    try:
        yield live
    finally:
        use_budget(previous)
        path = Path(run_dir) / BUDGET_FILE
        path.parent.mkdir(parents=True, exist_ok=True)
        temp = path.with_name(f".{BUDGET_FILE}.tmp")
        temp.write_text(json.dumps({"limits": budget.model_dump(mode="json"), "spent": live.spent(),
                                    "reached": live.reached}, indent=1), encoding="utf-8")
        temp.replace(path)


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
