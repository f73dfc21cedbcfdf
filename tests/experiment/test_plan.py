"""The pre-flight returns one checked plan: app ids, tracks, and each role's provider resolved once."""

from __future__ import annotations

import pytest

from cua.policies import POLICIES
from experiment import ConfigError, Plan, RoleProvider, check_config, make_config, offline_roles
from results import Track
from tests.experiment.test_offline_roles import _models

APP = "unit-converter"


def test_check_config_returns_the_plan_the_sweep_runs():
    config = make_config({"app_ids": [APP], "revision_modes": ["integrated", "unsupported"]})
    plan = check_config(config, probe_endpoints=False)
    assert isinstance(plan, Plan) and plan.app_ids == [APP] and plan.tasks == {APP: 7}
    assert [str(track) for track in plan.tracks] == ["offline · heuristic · integrated · dashboard",
                                                     "offline · heuristic · unsupported"]
    assert plan.provider("cua", "heuristic") == RoleProvider(role="cua", name="heuristic", offline=True,
                                                             policy=POLICIES.get("heuristic"))
    assert plan.offline and plan.models == [] and plan.offline_roles() == offline_roles(config)
    for track in plan.tracks:  # the labels of a track, from the plan, are the rule's
        assert plan.offline_roles(track) == offline_roles(config, track)


def test_each_cua_policy_name_is_looked_up_once(monkeypatch):
    looked_up = []
    real = POLICIES.get
    monkeypatch.setattr(POLICIES, "get", lambda name: looked_up.append(name) or real(name))
    check_config(make_config({"app_ids": [APP], "cua_policies": ["heuristic", "scripted"]}), probe_endpoints=False)
    assert looked_up == ["heuristic", "scripted"]


def test_an_unknown_policy_is_refused_naming_the_field_and_the_known_ones():
    with pytest.raises(ConfigError, match="field 'cua_policies': unknown policy 'magic-agent'.*'heuristic'"):
        check_config(make_config({"cua_policies": ["magic-agent"]}), probe_endpoints=False)


def test_a_model_the_registry_maps_to_offline_is_offline_and_keeps_its_model(tmp_path):
    config = make_config({"app_ids": [APP], "models_config": _models(tmp_path), "coders": ["rules", "offline"],
                          "verifier": "remote", "cua_policies": ["uitars"], "cua_model": "remote"})
    plan = check_config(config, probe_endpoints=False)
    # a registry model (offline or not) is called through the model client; the role's own implementation is not
    assert plan.provider("coder", "rules") == RoleProvider(role="coder", name="rules", offline=True, model="rules")
    assert plan.provider("coder", "offline").model is None
    assert plan.provider("verifier").model == "remote" and not plan.provider("verifier").offline
    assert plan.provider("cua").model == "remote" and plan.models == ["remote"]
    track = Track(coder="rules", cua="uitars", mode="unsupported")
    assert plan.offline_roles(track) == ["coder", "proposer", "judge"]  # no commenter in the unsupported mode


def test_the_sweep_runs_the_plan_it_is_given_and_looks_no_name_up_again(monkeypatch, tmp_path):
    """Downstream of the pre-flight nothing resolves a role again: the manifest and the labels come from the plan."""
    from flows import write_manifest

    config = make_config({"app_ids": [APP], "out_dir": str(tmp_path), "name": "planned"})
    plan = check_config(config, probe_endpoints=False)
    monkeypatch.setattr(POLICIES, "get", lambda name: pytest.fail(f"policy {name!r} looked up again"))
    written = write_manifest(config, plan, config.run_dir)
    manifest = __import__("json").loads(written.read_text())
    assert manifest["offline_roles"] == plan.offline_roles() and manifest["offline"] is True
    assert manifest["rollout_slots"] == plan.rollout_slots


def test_a_role_not_named_stays_offline_and_a_named_one_is_resolved_once_with_its_model(tmp_path):
    config = make_config({"app_ids": [APP], "models_config": _models(tmp_path), "commenter": "remote"})
    plan = check_config(config, probe_endpoints=False)
    commenter = plan.provider("commenter")
    assert (commenter.name, commenter.model, commenter.offline) == ("remote", "remote", False)
    assert plan.provider("proposer").offline and plan.provider("proposer").model is None
    assert not plan.offline and plan.models == ["remote"]


async def test_the_rollout_stage_builds_the_policy_the_plan_looked_up(monkeypatch, tmp_path):
    """From `--cua` to the rollout: the pre-flight's look-up is the only one (options checked and the stage built from
    the class the plan holds)."""
    from apps_prompts import BUNDLED_DIR, load_app
    from flows import PLAIN_STAGES, RunContext, TrackSteps

    looked_up = []
    real = POLICIES.get
    monkeypatch.setattr(POLICIES, "get", lambda name: looked_up.append(name) or real(name))
    config = make_config({"app_ids": [APP], "cua_options": {"heuristic": {}}, "out_dir": str(tmp_path)})
    plan = check_config(config, probe_endpoints=False)
    assert looked_up == ["heuristic"] and plan.provider("cua", "heuristic").policy is real("heuristic")
    run = RunContext(run_key="k", run_dir=str(tmp_path), apps=str(BUNDLED_DIR))
    steps = TrackSteps(config, run, APP, plan.tracks[0], PLAIN_STAGES, plan=plan)
    monkeypatch.setattr(POLICIES, "get", lambda name: pytest.fail(f"policy {name!r} looked up again"))
    task = load_app(APP).task("five-decimals")  # the heuristic agent does it in one step
    html = run.write("index.html", (BUNDLED_DIR / APP / "index.html").read_text(encoding="utf-8"))
    ref = await PLAIN_STAGES.rollout(run=run, app_id=APP, round=0, task=task, checker=task.checker, html=html,
                                     agent=steps.agent, out_path="rollout")
    assert ref.success
