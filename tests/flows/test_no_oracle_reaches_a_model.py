"""No model is told what the harness did to the app: a guard over every request body a scripted server receives.

Serve-time transforms (variations, injected defects) mark what they add with `cua.INJECTED_ATTRIBUTE`
and have names (`popup@seed=0`, `defect:no-response@#swap@seed=0`). The agent, the commenter, the
coder, the judge, the detector and the translator must see the app as a person would: these names
and markers would be an oracle (a detector told "defect:no-response" has nothing left to find). Two
runs through the real `openai` client, every model role scripted (`flows.testing.ScriptedRoles`):

- a loop with variations that inject elements (popup, misleading, adversarial) and `german` (the
  translator), revising on the popup look with the commenter and a model defect detector;
- a defect eval of a model detector on a defect run (misalignment, no-response, elements-overlapping).

Images are left out of the scan (their pixels are what a person sees); every text is scanned.
"""

from __future__ import annotations

import json
import re
import shutil
from collections import Counter

import pytest
import yaml

from apps_prompts import load_app, reference_html_path
from cua import DEFECT_PREFIX, INJECTED_ATTRIBUTE, Trajectory
from cua import DEFECT_TYPES as ALL_DEFECT_TYPES
from experiment import make_config
from flows import eval_run, inject_run, sweep_without_prefect
from flows.testing import ONLINE_ROLES, ScriptedRoles, click_point, role_of
from llm import ModelClient
from llm.testing import RecordedRequest, ScriptedOpenAIServer
from perturb import DefectSet
from verifier.judge import judge_run

APP = "unit-converter"
TASKS = ["swap-to-feet-metres", "miles-to-km"]
VARIATIONS = ["popup", "misleading", "adversarial", "german"]
DEFECT_TYPES = ["misalignment", "no-response", "elements-overlapping"]
# what a transform writes as the marker's value: its kind of element, or the defect it binds (`defect:<type>`)
MARKER_VALUES = ["defect-overlay", "popup-close", *(DEFECT_PREFIX + name for name in ALL_DEFECT_TYPES)]


def _texts(body: object) -> str:
    """Every text of a request body, images left out (a data URL is pixels, not words)."""
    if isinstance(body, dict):
        return "\n".join(_texts(value) for value in body.values())
    if isinstance(body, list):
        return "\n".join(_texts(value) for value in body)
    if isinstance(body, str):
        return "" if body.startswith("data:") else body
    return json.dumps(body)


def leaks(requests: list[RecordedRequest], names: set[str]) -> list[tuple[str, str, str]]:
    """(role, what, context) for every forbidden word found in a request: the marker, its values, a transform's name."""
    found = []
    for request in requests:
        text = _texts(request.json)
        for word in [INJECTED_ATTRIBUTE, *MARKER_VALUES, *sorted(names)]:
            for match in re.finditer(rf"(?<![\w-]){re.escape(word)}", text):
                found.append((role_of(request), word, text[max(0, match.start() - 60):match.end() + 60]))
    return found


def _small_apps(folder):
    spec = load_app(APP)
    target = folder / APP
    target.mkdir(parents=True)
    shutil.copy(reference_html_path(spec), target / "index.html")
    data = spec.model_dump(mode="json", exclude_none=True, exclude={"source"})
    data["tasks"] = [t for t in data["tasks"] if t["id"] in TASKS]
    (target / "app.yaml").write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True), encoding="utf-8")
    return folder


@pytest.mark.timeout(1200)
async def test_no_request_of_a_variation_run_names_a_transform_or_carries_its_marker(tmp_path, monkeypatch):
    monkeypatch.setenv("AUI_LLM_CACHE", "off")
    roles = ScriptedRoles(APP, TASKS, clicks={"swap-to-feet-metres": await click_point(APP, "#swap")})
    with ScriptedOpenAIServer(roles) as server:
        models = roles.write_models_yaml(server, tmp_path / "models.yaml")
        config = make_config({
            "name": "guarded", "app_ids": [APP], "rounds": 1, "revision_modes": ["integrated"], **ONLINE_ROLES,
            "translator": "translator", "feedback": "+defects", "commenter_modes": ["text-only"],
            "variations": VARIATIONS, "revise_on": "popup", "tasks_per_app": 3, "max_steps": 3,
            "out_dir": str(tmp_path / "runs"), "models_config": str(models)})
        results = await sweep_without_prefect(config)
        # the judge too (no task here has a check that needs it during the run): the run's trajectories, judged after
        client = ModelClient(models, cache=False)
        try:
            judged = await judge_run(config.run_dir, "judge", "screenshot", client)
        finally:
            await client.aclose()
    assert judged and all(j.error is None for j in judged)
    asked = Counter(role_of(r) for r in server.distinct_requests())
    # every model role was asked (so the scan below covers them all)
    assert {"coder", "proposer", "verifier", "uitars", "commenter", "translator", "detector", "judge"} <= set(asked), asked
    transforms = {Trajectory.load(config.run_dir / outcome.trajectory).transform
                  for result in results for variation in result.variations for outcome in variation.tasks}
    assert {name.split("@")[0] for name in transforms} == set(VARIATIONS), transforms
    # the full names the harness served; the bare variation names too, but for `german`: the translator must be
    # told the language it translates into (its prompt says "German", which is not the variation's name anyway)
    names = transforms | {name for name in VARIATIONS if name != "german"}
    assert leaks(server.requests, {"Saved conversions"}), "the scan reads what the requests say (the app's words)"
    assert leaks(server.requests, names) == []


@pytest.mark.timeout(1200)
async def test_no_request_of_a_defect_eval_names_the_defect_or_carries_its_marker(tmp_path, monkeypatch):
    monkeypatch.setenv("AUI_LLM_CACHE", "off")
    run = tmp_path / "defects"
    defect_set = await inject_run(run, apps_path=_small_apps(tmp_path / "apps"), app_ids=[APP], types=DEFECT_TYPES)
    assert {r.type for r in defect_set.proven} == set(DEFECT_TYPES)
    roles = ScriptedRoles(APP, TASKS)
    with ScriptedOpenAIServer(roles) as server:
        client = ModelClient(roles.write_models_yaml(server, tmp_path / "models.yaml"), cache=False)
        try:
            metrics = await eval_run(run, "detector", client)
        finally:
            await client.aclose()
    assert metrics.overall.tuples and not metrics.reference_assisted
    assert {role_of(r) for r in server.requests} == {"detector"}
    # the defect types themselves are the detector's taxonomy (its prompt lists all 13); which one a tuple has is not
    names = {r.transform for r in DefectSet.read(run).records}
    assert leaks(server.requests, {"click"}), "the scan reads what the requests say (the actions)"
    assert leaks(server.requests, names) == []
