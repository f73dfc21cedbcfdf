"""The online path end to end: every role through the real `openai` client, against a scripted server.

One bundled app, one integrated revision. The scripted server (`flows.testing.ScriptedRoles`)
plays the coder, the proposer (two of the spec's tasks and one the app cannot do), the verifier
(reference checkers; "not solvable" for the third), UI-TARS (clicks #swap for the swap task — a
success — and says `finished()` at once for the other — a failure) and the commenter.
"""

from __future__ import annotations

import json
from collections import Counter

import pytest

from experiment import make_config
from flows import sweep
from flows.testing import ONLINE_ROLES, REVISION_MARK, ScriptedRoles, click_point, role_of
from insights import insights_of
from llm import call_stats
from llm.testing import ScriptedOpenAIServer

APP = "unit-converter"


@pytest.mark.timeout(900)
async def test_online_loop_runs_every_role_through_the_openai_client_and_reruns_from_cache(
        tmp_path, prefect_server, monkeypatch):
    # Only Prefect's cache may make the re-run free: the client's own on-disk call cache is off.
    monkeypatch.setenv("AUI_LLM_CACHE", "off")
    roles = ScriptedRoles(APP, ["swap-to-feet-metres", "miles-to-km"],
                          clicks={"swap-to-feet-metres": await click_point(APP, "#swap")})
    with ScriptedOpenAIServer(roles) as server:
        models = roles.write_models_yaml(server, tmp_path / "models.yaml")
        config = make_config({
            "name": "online", "app_ids": [APP], "rounds": 1, "revision_modes": ["integrated"], **ONLINE_ROLES,
            "tasks_per_app": 3, "max_steps": 3, "out_dir": str(tmp_path / "runs"), "models_config": str(models),
        })

        results = await sweep(config)

        seen = Counter(role_of(r) for r in server.requests)
        assert seen["unknown"] == 0, [r.json for r in server.requests if role_of(r) == "unknown"][:1]
        # the calls each role made: a retried request (the client timed out on a loaded machine) counts once; every
        # call of these roles has a body of its own (UI-TARS's may repeat: the same screen in both rounds)
        asked = Counter(role_of(r) for r in server.distinct_requests())
        assert asked["coder"] == 2  # v0 and one revision (ids kept: no contract retry)
        assert asked["proposer"] == 1
        assert asked["verifier"] == 2  # one batch per version
        assert asked["commenter"] == 1  # the one failed rollout of round 0 (the last round is not commented)
        assert seen["uitars"] >= 4  # swap: click (success); miles: finished — in both rounds

        by_round = {r.round: r for r in results}
        assert set(by_round) == {0, 1}
        for result in results:
            assert len(result.tasks) == 3
            swap = next(t for t in result.tasks if t.task_id.startswith("swap-the-units"))
            miles = next(t for t in result.tasks if t.task_id.startswith("convert-5-miles"))
            export = next(t for t in result.tasks if t.task_id.startswith("export-all-saved"))
            assert swap.success and swap.termination == "success"
            assert miles.checker_valid and not miles.success and miles.termination == "finished"
            assert not export.checker_valid and "PDF" in (export.reason or "")
            assert result.offline_roles == []
            assert abs(result.fc - 2 / 3) < 1e-9 and abs(result.sr - 1 / 3) < 1e-9
        run_dir = config.run_dir
        assert REVISION_MARK in (run_dir / by_round[1].html).read_text(encoding="utf-8")
        assert by_round[1].contract["status"] == "kept"
        feedback = json.loads(next((run_dir / "apps" / APP).rglob("feedback-round-0.json")).read_text())
        assert any("`button`" in change for change in feedback["actionable_changes"])

        payload = json.loads((run_dir / "results.json").read_text())
        assert {row["round"] for row in payload["table"]} == {0, 1}
        assert payload["offline_roles"] == []
        by_role = payload["usage"]["by_role"]
        assert {"coder", "proposer", "commenter", "cua"} <= set(by_role), by_role
        assert sum(entry["calls"] for entry in by_role.values()) == len(server.requests)
        # Table 5's tokens are the ledger's: the commenter calls under its role per mode.
        ledger = payload["usage"]["by_commenter_mode"]["dashboard"]
        assert ledger["calls"] == by_role["commenter"]["calls"] == asked["commenter"]
        (row,) = payload["by_commenter_mode"]
        assert row["commenter"] == "dashboard" and row["tokens"] > 0
        assert row["tokens"] == ledger["prompt_tokens"] + ledger["completion_tokens"]
        manifest = json.loads((run_dir / "manifest.json").read_text())
        assert manifest["models"]["scripted"]["endpoint"].startswith("http://127.0.0.1:")
        assert "sk-scripted" not in json.dumps(manifest)

        requests_before, calls_before = len(server.requests), call_stats().calls
        again = await sweep(config)
        assert len(server.requests) == requests_before, "a re-run must not call any model"
        assert call_stats().calls == calls_before
        assert [r.model_dump() for r in again] == [r.model_dump() for r in results]

        # Design insights of a model coder's revision: what the commenter asked is what counts, and the DOM decides
        # whether it happened — the scripted coder only marked the file, so none of the named elements changed.
        found = await insights_of([run_dir])
        asked = [change for change in found.changes if change.kind == "asked"]
        assert len(asked) == len(feedback["actionable_changes"]) and all(change.counted for change in asked)
        assert not any(change.applied for change in asked), [change.how for change in asked]
        assert all(change.elements and change.how.startswith("DOM diff: 0 of") for change in asked)
        assert found.principles == []  # nothing applied: no principle has anything to show
