"""Budgets: once a limit is reached no new call is sent; cache hits are free; per-role limits."""

from __future__ import annotations

import pytest

from llm import Budget, BudgetLimits, BudgetReached, use_budget, user_message
from llm.testing import ScriptedOpenAIServer, reply_text


@pytest.fixture
def budget_in_use():
    installed = []

    def install(budget: Budget) -> Budget:
        installed.append(use_budget(budget))
        return budget

    yield install
    if installed:
        use_budget(installed[0])


async def test_no_call_is_sent_once_the_run_has_made_its_calls(make_client, budget_in_use):
    budget = budget_in_use(Budget(BudgetLimits(max_model_calls=2)))
    with ScriptedOpenAIServer(default=reply_text("ok")) as server:
        client = make_client(server, cache=True)
        await client.chat([user_message("one")], role="coder")
        await client.chat([user_message("two")], role="cua")
        again = await client.chat([user_message("one")], role="coder")  # a cache hit costs nothing
        with pytest.raises(BudgetReached, match=r"budget reached: the run has made 2 of its 2 model calls"):
            await client.chat([user_message("three")], role="cua")
    assert again.cached and len(server.requests) == 2
    assert (await budget.spent())["*"]["calls"] == 2 and budget.reached.startswith("the run has made 2")


async def test_a_role_limit_stops_that_role_only_and_cost_counts_in_dollars(make_client, budget_in_use):
    # scripted prices: $1 per 1M prompt tokens, $2 per 1M completion tokens; a reply is 11 + 7 tokens
    per_call = (11 * 1.0 + 7 * 2.0) / 1_000_000
    budget = budget_in_use(Budget(BudgetLimits(max_cost_usd=per_call * 10),
                                  {"commenter": BudgetLimits(max_model_calls=1)}))
    with ScriptedOpenAIServer(default=reply_text("ok")) as server:
        base = make_client(server, cache=False)
        client = type(base)(base.registry.with_roles({"commenter:dashboard": "scripted", "commenter:text-only": "scripted"}),
                            cache=False)
        await client.chat([user_message("a")], role="commenter:dashboard")
        with pytest.raises(BudgetReached, match="role 'commenter' has made 1 of its 1"):
            await client.chat([user_message("b")], role="commenter:text-only")
        for n in range(9):
            await client.chat([user_message(f"c{n}")], role="cua")
        with pytest.raises(BudgetReached, match=r"the run has spent \$0\.00025 of its \$0\.00025"):
            await client.chat([user_message("d")], role="cua")
    assert len(server.requests) == 10
    spent = await budget.spent()
    assert spent["commenter"]["calls"] == 1 and spent["commenter:dashboard"]["calls"] == 1
    assert spent["*"]["cost_usd"] == pytest.approx(per_call * 10)


async def test_spending_carries_over_into_a_new_budget():
    old = Budget(BudgetLimits(max_model_calls=5))
    for _ in range(3):
        await old.start_call("cua", "m")
    carried = Budget(BudgetLimits(max_model_calls=4), spent=await old.spent())
    await carried.start_call("cua", "m")
    with pytest.raises(BudgetReached):
        await carried.start_call("cua", "m")
