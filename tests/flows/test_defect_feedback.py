"""`--feedback +defects`: the GUI defects a detector finds in failed rollouts reach the coder's feedback."""

from __future__ import annotations

import json
from types import SimpleNamespace

from typer.testing import CliRunner

import coder

from commenter import Feedback
from cua import Action, Point, RolloutConfig, rollout
from cua.policies import get_policy
from experiment import ConfigError, RoleProvider, check_config, make_config
from flows import PLAIN_STAGES, TrackSteps
from flows._sweep import run_context
from results import Track

# A shop whose Buy control does nothing (a real defect of the app, not an injected one).
SHOP = """<!doctype html><html><body style="margin:0;font-family:sans-serif">
<h1 style="margin:20px">Shop</h1>
<div id="buy" role="button" style="position:absolute;left:40px;top:100px;width:140px;height:40px;cursor:pointer;
  background:#0a6;color:#fff;text-align:center;line-height:40px">Buy</div>
<p id="status" style="position:absolute;top:200px;left:40px"></p>
</body></html>"""


def test_the_config_spells_the_feedback_sources():
    assert make_config({}).feedback == ["commenter"]
    assert make_config({"feedback": "+defects"}).feedback == ["commenter", "defects"]
    assert make_config({"feedback": "defects"}).feedback == ["defects"]
    try:
        make_config({"feedback": "+bugs"})
    except ConfigError as exc:
        assert "feedback" in str(exc)
    else:
        raise AssertionError("an unknown feedback source was accepted")
    # the comment stage's cache key changes only when the feedback does
    plain = TrackSteps._feedback_sources(SimpleNamespace(config=make_config({})))
    config = make_config({"feedback": "+defects", "detector": "offline"})
    more = TrackSteps._feedback_sources(SimpleNamespace(config=config, plan=check_config(config, probe_endpoints=False)))
    assert plain == {} and more == {"sources": ["commenter", "defects"],
                                    "detector": RoleProvider(role="detector", name="offline", offline=True)}


async def test_detected_defects_are_added_to_the_feedback_the_coder_reads(tmp_path):
    config = make_config({"name": "shop", "out_dir": str(tmp_path), "feedback": "+defects"})
    run = run_context(config)
    html = run.write("apps/shop/round-0/index.html", SHOP)
    folder = "apps/shop/round-0/rollouts/scripted/buy"
    script = [Action(kind="click", point=Point(x=110, y=120)), Action(kind="finished")]
    await rollout(SHOP, "Buy the item", get_policy("scripted", script=script), None, run.root / folder,
                  RolloutConfig(max_steps=3), app_id="shop", task_id="buy")
    track = Track(coder="offline", cua="scripted", mode="integrated", commenter_mode="dashboard")
    plan = check_config(config, probe_endpoints=False)
    ref = await PLAIN_STAGES.comment(run=run, app_id="shop", round=0, html=html, trajectories=[folder],
                                     commenter=plan.provider("commenter"), track=track, sources=config.feedback,
                                     detector=plan.provider("detector"))
    feedback = Feedback.model_validate(json.loads(run.file(ref.file).read_text(encoding="utf-8")))
    assert feedback.actionable_changes  # the commenter's own feedback is still there
    [defect] = feedback.defects
    assert "`#buy`" in defect and "no-response" in defect and "step 1" in defect
    assert "GUI defects detected in the agent's steps" in feedback.render() and defect in feedback.render()
    assert ref.items == len(feedback.actionable_changes) + 1
    # … and the coder reads them as the revise stage does (`coder.Feedback` of the same file; tests/coder: its prompt)
    assert coder.Feedback.model_validate(json.loads(run.file(ref.file).read_text(encoding="utf-8"))).defects == [defect]
    assert (run.root / folder / "tuples.jsonl").is_file()  # written for a rollout made without them


def test_the_run_command_takes_feedback_and_detector_flags(tmp_path):
    from aui import app as cli

    result = CliRunner().invoke(cli, ["run", "--offline", "--feedback", "+wobble", "--out", str(tmp_path)])
    assert result.exit_code == 2 and "feedback" in result.output


async def test_the_rollout_stage_writes_tuples_labelled_on_a_defect_app(tmp_path):
    from pathlib import Path

    from apps_prompts import BUNDLED_DIR, load_app, reference_html_path
    from cua import Trajectory, read_tuples, transition_tuples
    from flows import AgentSettings, RunContext
    from flows._refs import FileRef, sha256_bytes
    from flows._rollouts import rollout_task
    from perturb import defect_transform, make_defect

    spec = load_app("unit-converter")
    task = spec.task("clear-saved")
    html = Path(reference_html_path(spec)).read_bytes()
    (tmp_path / "v0").mkdir()
    (tmp_path / "v0" / "index.html").write_bytes(html)
    out = "v0/rollouts/heuristic/variations/defect/" + task.id
    ref = await rollout_task.fn(run=RunContext(run_key="k", run_dir=str(tmp_path), apps=str(BUNDLED_DIR)),
                                app_id="unit-converter", round=0, task=task, checker=task.checker,
                                html=FileRef(path="v0/index.html", sha=sha256_bytes(html)),
                                agent=AgentSettings(policy="heuristic", max_steps=3), out_path=out,
                                variation="defect", transform=defect_transform(make_defect("no-response", "#clear-history")))
    folder = tmp_path / out
    tuples = read_tuples(folder)
    assert tuples == transition_tuples(Trajectory.load(folder)) and len(tuples) >= 1
    assert not ref.success and tuples[0].defect == "no-response"  # the heuristic clicked "Clear all": nothing happened
    assert {t.defect for t in tuples} <= {"no-response", "none"}


def test_the_run_size_counts_a_model_detectors_calls_only_when_it_is_asked_for():
    from experiment import run_size

    counts = {"unit-converter": 8}
    asked = run_size(make_config({"feedback": "+defects", "detector": "detector", "app_ids": ["unit-converter"]}), counts)
    # every step of every failed rollout that is commented on (8 tasks × 2 rounds × 30 steps at most), a repair each
    assert (asked.by_role["detector"].calls_low, asked.by_role["detector"].calls_high) == (0, 2 * 8 * 2 * 30)
    assert "detector" not in run_size(make_config({"feedback": "+defects", "app_ids": ["unit-converter"]}), counts).by_role
    assert "detector" not in run_size(make_config({"app_ids": ["unit-converter"]}), counts).by_role
