"""Stage inputs are typed records that hash the same in every process, and cannot be passed by position."""

from __future__ import annotations

import inspect
import json
import subprocess
import sys
from pathlib import Path

import pytest
from prefect.cache_policies import INPUTS
from prefect.serializers import JSONSerializer

from apps_prompts import load_app
from cua import Viewport
from flows import PREFECT_STAGES, AgentSettings, FileRef, RunContext
from results import Track

ROOT = Path(__file__).resolve().parents[2]


def _inputs(sha: str = "b" * 64) -> dict:
    """The inputs of one rollout stage call, built from scratch (no object shared with another call)."""
    return {
        "run": RunContext(run_key="k", run_dir="/runs/x", apps="apps_prompts/bundled", models=None, v0_dir=None),
        "app_id": "unit-converter",
        "round": 1,
        "task": load_app("unit-converter").task("swap-to-feet-metres"),
        "checker": "return true;",
        "html": FileRef(path="apps/unit-converter/offline/round-0/index.html", sha=sha),
        "agent": AgentSettings(policy="heuristic", max_steps=20, viewport=Viewport(width=1024, height=768)),
        "out_path": "apps/unit-converter/offline/round-0/rollouts/heuristic/swap-to-feet-metres",
    }


def _key(inputs: dict) -> str:
    return INPUTS.compute_key(task_ctx=None, inputs=inputs, flow_parameters={})


def test_stage_inputs_hash_through_json_not_pickle():
    # Prefect falls back to cloudpickle when JSON fails; pickled bytes need not be stable across
    # processes. The records serialise to plain JSON (class path + fields).
    dumped = JSONSerializer(dumps_kwargs={"sort_keys": True}).dumps((_inputs(),))
    assert b'"flows._refs.RunContext"' in dumped and b'"width": 1024' in dumped


def test_the_cache_key_is_the_same_in_another_process_and_changes_with_the_content():
    here = _key(_inputs())
    assert here == _key(_inputs())
    script = ("import sys; sys.path.insert(0, '.'); from tests.flows.test_stage_inputs import _inputs, _key; "
              "print(_key(_inputs()))")
    other = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120, check=True)
    assert other.stdout.strip().splitlines()[-1] == here
    assert _key(_inputs(sha="c" * 64)) != here, "a file with other content must miss the cache"
    moved = {**_inputs(), "agent": AgentSettings(policy="heuristic", max_steps=20)}
    assert _key(moved) != here, "another viewport must miss the cache"


def test_records_are_frozen():
    ref = FileRef(path="a/index.html", sha="0" * 64)
    with pytest.raises(ValueError):
        ref.sha = "1" * 64
    assert Track(coder="gpt-5", cua="uitars", mode="cua").folder == Path("gpt-5/uitars/cua")
    assert Track(coder="qwen:7b", cua="uitars", mode="cua").folder == Path("qwen-7b/uitars/cua")


@pytest.mark.parametrize("name", ["generate", "propose", "verify", "rollout", "comment", "revise"])
async def test_every_stage_takes_its_inputs_by_keyword_only(name):
    stage = getattr(PREFECT_STAGES, name).fn
    parameters = inspect.signature(stage).parameters.values()
    assert parameters and all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in parameters), name
    with pytest.raises(TypeError):
        await stage("k", "/runs/x")  # two strings in the wrong order can no longer slip through
    # the records, not loose strings, carry files: no parameter is a bare path or hash
    assert not [p.name for p in parameters if p.name.endswith(("_sha", "_path")) and p.name != "out_path"]


def test_a_verdicts_file_round_trips_through_the_verifiers_model(tmp_path):
    """The loop reads verdicts.json only through `verifier.AppVerdicts` (no key names by hand)."""
    from verifier import AppVerdicts, Verdict, read_verdicts, write_verdicts

    verdicts = AppVerdicts(app_id="a", domain="app", html_sha256="0" * 64, verifier="offline", offline=True,
                           verdicts=[Verdict(task_id="t", solvable=False, model="offline", reasons=["no"])])
    write_verdicts(verdicts, tmp_path)
    assert read_verdicts(tmp_path).verdict("t").reason == "no"
    assert json.loads((tmp_path / "verdicts.json").read_text())["function_completeness"] == 0.0
