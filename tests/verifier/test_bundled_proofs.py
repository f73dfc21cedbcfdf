"""Every bundled task's reference checker and solution, sent as a verifier model's reply: all proven.

The offline verifier's run of the same checkers is in test_gate.py (one run per app there).
"""

from __future__ import annotations

import asyncio
import json

from apps_prompts import load_apps
from llm import ModelClient
from llm.testing import ScriptedOpenAIServer, reply_text, scripted_registry
from verifier import function_completeness, function_completeness_proven, verify_app

from .conftest import reference_entry, request_text

BUNDLED = load_apps().apps


async def test_every_bundled_reference_checker_sent_by_a_model_is_proven_without_a_repair():
    replies = {spec.title: [reference_entry(task) for task in spec.tasks] for spec in BUNDLED}

    def script(request):
        title = next(title for title in replies if f"App: {title}" in request_text(request, 1))
        return reply_text(json.dumps({"verdicts": replies[title]}))

    with ScriptedOpenAIServer(script) as server:
        client = ModelClient(scripted_registry(server), cache=False)
        judged = await asyncio.gather(*(verify_app(spec, verifier="scripted", client=client) for spec in BUNDLED))
    assert len(server.requests) == len(BUNDLED)  # no repair round-trip anywhere

    not_proven = {f"{app.app_id}/{v.task_id}": v.proof_reason for app in judged for v in app.verdicts if not v.proven}
    assert not not_proven
    tasks = sum(len(spec.tasks) for spec in BUNDLED)
    assert tasks >= 90 and sum(len(app.verdicts) for app in judged) == tasks
    for app in judged:
        assert function_completeness_proven(app) == function_completeness(app)
        assert app.function_completeness_proven == 1.0
        assert all(v.solution and v.static_warnings == [] and v.repairs == 0 for v in app.verdicts)
