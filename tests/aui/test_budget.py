"""A run's budget: it stops the run where the limit is reached, and a re-run with a higher one resumes."""

from __future__ import annotations

import json
from collections import Counter

import pytest
import yaml

from experiment import make_config
from flows import sweep
from flows.testing import ONLINE_ROLES, ScriptedRoles, click_point, role_of
from llm.testing import ScriptedOpenAIServer

APP = "unit-converter"


@pytest.mark.timeout(600)
async def test_the_budget_stops_new_calls_and_a_higher_one_resumes_from_what_finished(tmp_path, prefect_server, monkeypatch):
    monkeypatch.setenv("AUI_LLM_CACHE", "off")  # only Prefect's cache of finished stages may save calls
    roles = ScriptedRoles(APP, ["swap-to-feet-metres", "miles-to-km"],
                          clicks={"swap-to-feet-metres": await click_point(APP, "#swap")})
    with ScriptedOpenAIServer(roles) as server:
        models = roles.write_models_yaml(server, tmp_path / "models.yaml")
        base = {"name": "budget", "app_ids": [APP], "rounds": 1, **ONLINE_ROLES, "tasks_per_app": 3, "max_steps": 3,
                "out_dir": str(tmp_path / "runs"), "models_config": str(models)}

        # coder, proposer, verifier, then one CUA call: the second rollout's first call is refused
        first = await sweep(make_config({**base, "budget": {"max_model_calls": 4}}))
        seen = Counter(role_of(r) for r in server.requests)
        assert seen == {"coder": 1, "proposer": 1, "verifier": 1, "uitars": 1}
        assert [r.round for r in first] == [0]  # no round is started after the budget is reached
        rolled = [t for t in first[0].tasks if t.trajectory]
        assert len(rolled) == 1
        assert any("1 rollout(s) not finished: budget reached" in e for e in first[0].errors)
        run_dir = tmp_path / "runs" / "budget"
        saved = json.loads((run_dir / "budget.json").read_text())
        assert saved["spent"]["*"]["calls"] == 4 and saved["reached"].startswith("the run has made 4 of its 4")
        from flows import budget_line

        assert budget_line(run_dir).startswith("budget reached: the run has made 4 of its 4 model calls")

        # The same budget again: nothing more is sent.
        await sweep(make_config({**base, "budget": {"max_model_calls": 4}}))
        assert len(server.requests) == 4

        # A higher budget resumes: finished stages are not asked again, the rest of the run is done.
        before = len(server.requests)
        second = await sweep(make_config({**base, "budget": {"max_model_calls": 10}}))
        resumed = Counter(role_of(r) for r in server.requests[before:])
        assert resumed == {"uitars": 3, "commenter": 1, "coder": 1, "verifier": 1}  # 1 left over + 2 in round 1
        assert [r.round for r in second] == [0, 1] and not any(r.errors for r in second)
        assert json.loads((run_dir / "budget.json").read_text())["reached"] is None
        assert budget_line(run_dir) is None
        by_task = {t.task_id: t for t in second[0].tasks}
        assert by_task[rolled[0].task_id].trajectory == rolled[0].trajectory  # the finished rollout was kept


def test_budget_flags_override_the_config_and_bad_ones_are_named(tmp_path):
    from experiment import ConfigError, command_config

    config_file = tmp_path / "sweep.yaml"
    config_file.write_text(yaml.safe_dump({"budget": {"max_model_calls": 5, "roles": {"cua": {"max_model_calls": 3}}}}))
    changed = command_config({"budget.max_cost_usd": 2.5}, config_file)
    assert changed.budget.max_cost_usd == 2.5 and changed.budget.max_model_calls == 5
    assert changed.budget.roles["cua"].max_model_calls == 3
    with pytest.raises(ConfigError, match="^--max-model-calls: .*greater than or equal to 0 \\(got -1\\)"):
        command_config({"budget.max_model_calls": -1}, config_file)
    with pytest.raises(ConfigError, match="budget.roles.cua.max_calls"):
        make_config({"budget": {"roles": {"cua": {"max_calls": 3}}}})
