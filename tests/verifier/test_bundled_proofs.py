"""Bundled tasks' reference checkers and solutions, sent as a verifier model's reply: all proven.

Every bundled task is proven through the offline verifier in test_gate.py (one run per app there);
here the model's route, on five apps that between them hold every kind of solution step the bundle
uses and answer checks of all four match kinds (the whole bundle took a minute more of the suite).
"""

from __future__ import annotations

import asyncio
import json

from apps_prompts import load_apps
from llm import ModelClient
from llm.testing import ScriptedOpenAIServer, reply_text, scripted_registry
from verifier import function_completeness, function_completeness_proven, verify_app

from .conftest import reference_entry, request_text

MODEL_ROUTE_APPS = ("mortgage-calculator", "pomodoro-focus-timer", "vault-cracker", "trip-splitter", "relay-saas-landing")
BUNDLED = [spec for spec in load_apps().apps if spec.id in MODEL_ROUTE_APPS]


async def test_every_bundled_reference_checker_sent_by_a_model_is_proven_without_a_repair():
    replies = {spec.title: [reference_entry(task) for task in spec.tasks] for spec in BUNDLED}

    def script(request):
        title = next(title for title in replies if f"App: {title}" in request_text(request, 1))
        return reply_text(json.dumps({"verdicts": replies[title]}))

    with ScriptedOpenAIServer(script) as server:
        client = ModelClient(scripted_registry(server), cache=False)
        judged = await asyncio.gather(*(verify_app(spec, verifier="scripted", client=client) for spec in BUNDLED))
    assert len(server.distinct_requests()) == len(BUNDLED)  # no repair round-trip anywhere

    not_proven = {f"{app.app_id}/{v.task_id}": v.proof_reason for app in judged for v in app.verdicts if not v.proven}
    assert not not_proven
    tasks = sum(len(spec.tasks) for spec in BUNDLED)
    assert len(BUNDLED) == len(MODEL_ROUTE_APPS) and tasks >= 40
    every_step_kind = {step.action for spec in load_apps().apps for task in spec.tasks for step in task.solution}
    assert {step.action for spec in BUNDLED for task in spec.tasks for step in task.solution} == every_step_kind
    assert {task.answer_check.match for spec in BUNDLED for task in spec.tasks if task.answer_check} == {
        "exact", "normalized", "regex", "number"} and sum(len(app.verdicts) for app in judged) == tasks
    for app in judged:
        assert function_completeness_proven(app) == function_completeness(app)
        assert app.function_completeness_proven == 1.0
        assert all(v.solution and v.static_warnings == [] and v.repairs == 0 for v in app.verdicts)
