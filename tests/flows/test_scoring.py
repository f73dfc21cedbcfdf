"""OSUniverse's scoring in the loop: step budgets by level, repeats with their own seeds, the weighted score.

The loop runs with scripted stages (no browser, no model), so the test decides what each rollout
gets and how it ends; the figures are checked against hand-worked values.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from apps_prompts import Level, Task, load_app
from experiment import make_config
from flows import RolloutRef, RunContext, Stages, TasksRef, TrackSteps, VerifyRef, VersionRef, judge_and_revise
from results import (
    AppRoundResult,
    RunResults,
    TaskOutcome,
    Track,
    pass_counts,
    read_results,
    scoring_table,
    table_rows,
    write_results,
)
from verifier import AppVerdicts, Verdict, write_verdicts

APP = "unit-converter"
LEVELS = ["paper", "gold", None]  # one task at each; None: a task without a level


def _tasks() -> list[Task]:
    base = load_app(APP).tasks[:3]
    return [task.model_copy(update={"level": Level(level) if level else None}) for task, level in zip(base, LEVELS)]



async def _no_variations(**_):
    raise AssertionError("this run has no variations: nothing is translated or proven on a variant")

class Recording:
    """Stages that record what each rollout was given; task 0 always succeeds, task 1 only in repeat 1."""

    def __init__(self):
        self.rollouts: list[dict] = []

    def stages(self) -> Stages:
        return Stages(self.generate, self.propose, self.verify, self.rollout, self.comment, self.revise,
                      _no_variations, _no_variations)

    async def generate(self, *, run, app_id, coder, viewport):
        return VersionRef(app_id=app_id, round=0, html=run.write("v/round-0/index.html", "<p>v0</p>"), coder=coder.name,
                          offline=True)

    async def propose(self, *, run, app_id, proposer, tasks_file, tasks_per_app):
        data = "[" + ",".join(t.model_dump_json() for t in _tasks()) + "]"
        return TasksRef(app_id=app_id, file=run.write("tasks.json", data), count=3, offline=True)

    async def verify(self, *, run, app_id, round, html, tasks, verifier):
        ids = [t.id for t in _tasks()]
        verdicts = AppVerdicts(app_id=app_id, domain="tool", html_sha256=html.sha, verifier="offline", offline=True,
                               verdicts=[Verdict(task_id=t, solvable=True, checker="return true;", model="offline") for t in ids])
        write_verdicts(verdicts, run.file(html).parent)
        return VerifyRef(app_id=app_id, file=run.ref(Path(html.path).parent / "verdicts.json"),
                         valid={t: True for t in ids}, reasons={}, offline=True)

    async def rollout(self, *, run, app_id, round, task, checker, html, agent, out_path, checks=None, judge=None):
        self.rollouts.append({"task": task.id, "level": task.level, "max_steps": agent.max_steps, "seed": agent.seed,
                              "out_path": out_path})
        index = [t.id for t in _tasks()].index(task.id)
        repeat = 1 if "repeat-1" in out_path else 0
        success = index == 0 or (index == 1 and repeat == 1)
        return RolloutRef(app_id=app_id, task_id=task.id, trajectory=out_path, dashboard=None,
                          termination="success" if success else "max_steps", success=success, steps=agent.max_steps)

    async def comment(self, **_):
        return None

    async def revise(self, **_):
        raise AssertionError("rounds: 0")


async def _run(tmp_path: Path, **config) -> tuple[list[AppRoundResult], Recording, object]:
    config = make_config({"app_ids": [APP], "rounds": 0, "out_dir": str(tmp_path), **config})
    run = RunContext(run_key="k", run_dir=str(tmp_path), apps=str(config.apps))
    recording = Recording()
    track = Track(coder="offline", cua="heuristic", mode="integrated", commenter_mode="dashboard")
    results = await judge_and_revise(TrackSteps(config, run, APP, track, recording.stages()), config.rounds)
    return results, recording, config


async def test_each_rollout_gets_its_levels_step_budget_and_each_repeat_its_own_seed(tmp_path):
    results, recording, config = await _run(tmp_path, repeats=2, seed=7)
    got = sorted((r["task"], r["max_steps"], r["seed"], r["out_path"].split("/rollouts/")[1]) for r in recording.rollouts)
    tasks = [t.id for t in _tasks()]
    want = sorted([(tasks[0], 5, 7, f"heuristic/{tasks[0]}"), (tasks[1], 30, 7, f"heuristic/{tasks[1]}"),
                   (tasks[2], 20, 7, f"heuristic/{tasks[2]}"),
                   (tasks[0], 5, 8, f"heuristic/repeat-1/{tasks[0]}"), (tasks[1], 30, 8, f"heuristic/repeat-1/{tasks[1]}"),
                   (tasks[2], 20, 8, f"heuristic/repeat-1/{tasks[2]}")])
    assert got == want  # paper 5 steps, gold 30, no level 20 (the paper's); seeds 7 and 8
    (result,) = results
    assert [r.repeat for r in result.repeats] == [1]
    assert pass_counts(result) == {tasks[0]: (2, 2), tasks[1]: (1, 2), tasks[2]: (0, 2)}


async def test_the_runs_max_steps_and_levels_override_the_defaults(tmp_path):
    _, recording, _ = await _run(tmp_path / "a", max_steps=3)
    assert {r["max_steps"] for r in recording.rollouts} == {3}
    _, recording, _ = await _run(tmp_path / "b", levels={"paper": {"weight": 0.5, "max_steps": 2}})
    by_level = {r["level"].value if r["level"] else None: r["max_steps"] for r in recording.rollouts}
    assert by_level == {"paper": 2, "gold": 30, None: 20}  # levels left out keep their defaults


def _outcome(task_id: str, level: str | None, passed: bool, valid: bool = True) -> TaskOutcome:
    return TaskOutcome(task_id=task_id, solvable=valid, checker_valid=valid, success=passed, level=level, proof="proven")


def _hand_computed() -> tuple[AppRoundResult, AppRoundResult]:
    """Weights paper 0.5, wood 1, bronze 2, silver 4, gold 8 (no silver task: a level with no task); no level: 1.

    app (domain app):  paper ✓, wood ✗, gold ✓          → (0.5 + 8) / (0.5 + 1 + 8) = 8.5 / 9.5 = 89.5 %
    tool (domain tool): bronze ✓, gold ✗, none ✓, bronze (no valid checker, ✗)
                                                        → (2 + 1) / (2 + 8 + 1 + 2) = 3 / 13 = 23.1 %
    overall                                             → 11.5 / 22.5 = 51.1 %
    """
    app = AppRoundResult(app_id="a", domain="app", coder="c", cua="u", mode="m", round=0, html="x", html_sha="0",
                         tasks=[_outcome("p", "paper", True), _outcome("w", "wood", False), _outcome("g", "gold", True)])
    tool = AppRoundResult(app_id="b", domain="tool", coder="c", cua="u", mode="m", round=0, html="y", html_sha="0",
                          tasks=[_outcome("b", "bronze", True), _outcome("g", "gold", False), _outcome("n", None, True),
                                 _outcome("x", "bronze", False, valid=False)])
    return app, tool


def test_the_weighted_score_equals_a_hand_computed_fixture(tmp_path):
    app, tool = _hand_computed()
    (row,) = table_rows([app, tool])
    assert row.weighted["app"] == pytest.approx(8.5 / 9.5)
    assert row.weighted["tool"] == pytest.approx(3 / 13)
    assert row.weighted["overall"] == pytest.approx(11.5 / 22.5)
    assert row.weighted["game"] is None  # a domain with no task
    assert row.sr_per_level == {"paper": 1.0, "wood": 0.0, "bronze": 0.5, "gold": 0.5, "none": 1.0}
    assert "silver" not in row.sr_per_level  # a level with no task has no SR, not 0
    assert row.sr["overall"] == pytest.approx(4 / 7)
    # the run's own weights change the score: gold 1 instead of 8
    (light,) = table_rows([app, tool], {"gold": 1.0})
    assert light.weighted["overall"] == pytest.approx((0.5 + 1 + 2 + 1) / (0.5 + 1 + 1 + 2 + 1 + 1 + 2))
    payload = write_results(tmp_path, [app, tool], weights={"gold": 1.0})
    assert payload[0].weighted["overall"] == light.weighted["overall"]
    stored = read_results(tmp_path)
    assert stored.weights["gold"] == 1.0 and stored.table[0].weighted["overall"] == pytest.approx(light.weighted["overall"])
    assert ",weighted,fc_ci95_low," in (tmp_path / "results.csv").read_text().splitlines()[0]  # the intervals follow


async def test_repeats_pool_into_sr_and_give_its_spread(tmp_path):
    results, _, config = await _run(tmp_path, repeats=2)
    (row,) = table_rows(results, config.weights)
    # repeat 0: task 0 passes (1/3); repeat 1: tasks 0 and 1 (2/3) → pooled 3/6
    assert row.sr_repeats == pytest.approx([1 / 3, 2 / 3]) and row.sr["overall"] == pytest.approx(0.5)
    assert row.tasks["overall"] == 3 and row.fc["overall"] == 1.0  # FC counts each task once
    # weights paper 0.5, gold 8, none 1 → repeat 0: 0.5 / 9.5; repeat 1: 8.5 / 9.5
    assert row.weighted_repeats == pytest.approx([0.5 / 9.5, 8.5 / 9.5])
    spread = row.spread
    assert spread["repeats"] == 2 and spread["sr_mean"] == pytest.approx(0.5)
    assert spread["sr_std"] == pytest.approx(1 / 6) and (spread["sr_min"], spread["sr_max"]) == pytest.approx((1 / 3, 2 / 3))
    (record,) = scoring_table([row])
    assert record["SR mean ± std"] == "50.0 ± 16.7" and record["SR min–max"] == "33.3–66.7"
    assert record["SR paper"] == "100.0" and record["SR gold"] == "50.0" and record["SR none"] == "0.0"


def test_a_results_file_from_before_levels_and_repeats_still_loads(tmp_path):
    legacy = {"apps": [{"app_id": "a", "domain": "app", "coder": "c", "cua": "u", "mode": "m", "round": 0, "html": "x",
                        "html_sha": "0", "tasks": [{"task_id": "t", "solvable": True, "checker_valid": True, "success": True}]}],
              "table": [], "usage": {}}
    import json

    (tmp_path / "results.json").write_text(json.dumps(legacy))
    stored = read_results(tmp_path)
    assert isinstance(stored, RunResults) and stored.apps[0].repeats == [] and stored.apps[0].tasks[0].level is None
    (row,) = table_rows(stored.apps, stored.weights)
    assert row.weighted["overall"] == 1.0 and row.sr_per_level == {"none": 1.0}


def test_a_flow_check_without_a_model_judge_is_refused_before_the_run(tmp_path):
    import yaml

    from experiment import ConfigError, check_config

    task = load_app(APP).tasks[0].model_dump(mode="json", exclude_none=True)
    task["checks"] = [{"kind": "flow"}]
    tasks_file = tmp_path / "tasks.yaml"
    tasks_file.write_text(yaml.safe_dump({APP: [task]}))
    config = make_config({"app_ids": [APP], "tasks_file": str(tasks_file), "out_dir": str(tmp_path)})
    with pytest.raises(ConfigError, match="has a flow check, which needs a model judge"):
        check_config(config, probe_endpoints=False)
    task["checks"] = [{"kind": "final_screenshot"}]  # the offline text judge may judge the final page
    tasks_file.write_text(yaml.safe_dump({APP: [task]}))
    assert check_config(config, probe_endpoints=False).app_ids == [APP]


COUNTER = """<!doctype html><body style="margin:0"><button id="b" style="position:absolute;left:100px;top:100px;
width:200px;height:80px" onclick="n.textContent = +n.textContent + 1">Press</button><p id="n">0</p></body>"""


@pytest.mark.parametrize("level, budget", [("paper", 5), ("wood", 10)])
async def test_a_levels_step_budget_ends_a_real_rollout_at_that_count(tmp_path, level, budget):
    """UI-TARS (scripted server) keeps pressing a button that changes the page; the checker never turns
    true: the rollout stage ends it with max_steps after exactly the level's budget."""
    import yaml

    from flows import PLAIN_STAGES, AgentSettings
    from llm.testing import ScriptedOpenAIServer, reply_text

    task = load_app(APP).tasks[0].model_copy(update={"level": Level(level), "checks": []})
    config = make_config({"app_ids": [APP], "out_dir": str(tmp_path), "cua_policies": ["uitars"]})
    press = reply_text("Thought: press it again.\nAction: click(start_box='(200,140)')")
    with ScriptedOpenAIServer([], default=press) as server:
        models = tmp_path / "models.yaml"
        models.write_text(yaml.safe_dump({"roles": {"cua": "scripted"}, "models": [
            {"name": "scripted", "provider": "openai-compatible", "model": "scripted-model", "base_url": server.base_url,
             "api_key": "sk-scripted", "timeout_s": 30, "max_retries": 0}]}))
        run = RunContext(run_key="k", run_dir=str(tmp_path), apps=str(config.apps), models=str(models))
        agent = AgentSettings(policy="uitars", model="scripted", calls="scripted", max_steps=config.step_budget(task), seed=config.seed)
        ref = await PLAIN_STAGES.rollout(run=run, app_id=APP, round=0, task=task, checker="return false;",
                                         html=run.write("index.html", COUNTER), agent=agent, out_path="r")
        requests = len(server.requests_for("chat"))
    assert (ref.termination, ref.steps, requests) == ("max_steps", budget, budget)
    assert [c.kind for c in ref.checks] == ["dom"] and not ref.success


async def test_k_of_n_per_task_is_in_results_json_and_the_report(tmp_path):
    from results import write_report

    results, _, config = await _run(tmp_path / "loop", repeats=2)
    rows = write_results(tmp_path, results, weights=config.weights)
    stored = read_results(tmp_path)
    tasks = [t.id for t in _tasks()]
    assert {(c["task_id"], c["passed"], c["repeats"]) for c in stored.pass_counts} == {
        (tasks[0], 2, 2), (tasks[1], 1, 2), (tasks[2], 0, 2)}
    html = write_report(tmp_path, rows, results, [], {}).read_text()
    assert "Passes across repeats (k of N)" in html and f"<td>{tasks[1]}</td><td>1/2</td>" in html


ORDER = """<!doctype html><body style="margin:0"><button id="b" style="position:absolute;left:100px;top:100px;
width:200px;height:80px" onclick="done.hidden = false">Place order</button><p id="done" hidden>Order 1234 confirmed</p></body>"""


def _scripted_uitars_models(server, path: Path, **params) -> Path:
    import yaml

    path.write_text(yaml.safe_dump({"roles": {"cua": "scripted"}, "models": [
        {"name": "scripted", "provider": "openai-compatible", "model": "scripted-model", "base_url": server.base_url,
         "api_key": "sk-scripted", "timeout_s": 30, "max_retries": 0, "params": params}]}))
    return path


@pytest.mark.parametrize("expected, passes", [('The page says "Order 1234 confirmed".', True),
                                              ('The page says "Order 9876 confirmed".', False)])
async def test_a_final_screenshot_check_is_scored_by_the_offline_judge_after_the_rollout(tmp_path, expected, passes):
    """UI-TARS (scripted server) places the order and the checker turns true; the final_screenshot check is then
    the offline judge's reading of the final page against the expected outcome, and the task passes only if it agrees."""
    from apps_prompts import JudgeCheck
    from flows import PLAIN_STAGES, AgentSettings
    from llm.testing import ScriptedOpenAIServer, reply_text

    task = load_app(APP).tasks[0].model_copy(update={"expected_outcome": expected, "checks": []})
    with ScriptedOpenAIServer([reply_text("Thought: place it.\nAction: click(start_box='(200,140)')")]) as server:
        run = RunContext(run_key="k", run_dir=str(tmp_path), apps=str(make_config({}).apps),
                         models=str(_scripted_uitars_models(server, tmp_path / "models.yaml")))
        agent = AgentSettings(policy="uitars", model="scripted", calls="scripted", max_steps=2)
        ref = await PLAIN_STAGES.rollout(run=run, app_id=APP, round=0, task=task,
                                         checker="return !document.getElementById('done').hidden;",
                                         html=run.write("index.html", ORDER), agent=agent, out_path="r",
                                         checks=[JudgeCheck(kind="final_screenshot")])  # the offline judge
    dom, judged = ref.checks
    assert (dom.kind, dom.passed, ref.termination) == ("dom", True, "success")
    assert (judged.kind, judged.judge, judged.passed) == ("final_screenshot", "offline", passes), judged.reason
    assert ("found" if passes else "missing") in judged.reason
    assert ref.success is passes  # every check must pass: the checker alone is not enough


@pytest.mark.parametrize("configured, sent", [(100, 108), (None, "not sent")])
async def test_a_repeats_model_seed_is_the_registrys_params_seed_plus_the_rollouts(tmp_path, configured, sent):
    """Repeat 1 of a run with seed 7 rolls out with seed 8 (see the first test); a model whose registry entry has
    `params.seed: 100` is asked with seed 108, one without a seed is sent none."""
    from flows import PLAIN_STAGES, AgentSettings
    from llm.testing import ScriptedOpenAIServer, reply_text

    task = load_app(APP).tasks[0].model_copy(update={"checks": []})
    params = {} if configured is None else {"seed": configured}
    with ScriptedOpenAIServer([reply_text("Thought: nothing to do.\nAction: finished(content='done')")]) as server:
        run = RunContext(run_key="k", run_dir=str(tmp_path), apps=str(make_config({}).apps),
                         models=str(_scripted_uitars_models(server, tmp_path / "models.yaml", **params)))
        await PLAIN_STAGES.rollout(run=run, app_id=APP, round=0, task=task, checker="return false;",
                                   html=run.write("index.html", ORDER),
                                   agent=AgentSettings(policy="uitars", model="scripted", calls="scripted", max_steps=1, seed=7 + 1),
                                   out_path="r")
        (request,) = server.requests_for("chat")
    assert request.json.get("seed", "not sent") == sent
