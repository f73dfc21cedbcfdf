"""The online path end to end: every role through the real `openai` client, against a scripted server.

One bundled app, one integrated revision. The scripted server plays five roles, told apart by
their system prompts: the coder (the reference HTML in an ```html fence; the revision is the
same page with a visible-nowhere change and every id kept), the proposer (three tasks as JSON),
the verifier (reference checkers for two tasks, "not solvable" for the third), UI-TARS (clicks
the swap button for the swap task — a success — and says `finished()` at once for the other — a
failure) and the commenter (feedback JSON for that failure).
"""

from __future__ import annotations

import json
import re
import threading
from collections import Counter
from pathlib import Path

import pytest
import yaml

from apps_prompts import load_app, reference_html_path
from flows._config import make_config
from flows._loop import sweep
from llm import call_stats
from llm.testing import RecordedRequest, ScriptedOpenAIServer, reply_status, reply_text

APP = "unit-converter"
SWAP = "Swap the units around so I'm converting feet to metres."
MILES = "Convert 5 miles to kilometres."
EXPORT = "Export all saved conversions as a PDF file."

ROLE_MARKERS = {
    "coder": "You are a front-end engineer",
    "proposer": "You design realistic test tasks",
    "verifier": "You are the verifier",
    "uitars": "You operate a web app in a browser",
    "commenter": "You review a web app for computer-use agents",
}


def role_of(request: RecordedRequest) -> str:
    messages = (request.json or {}).get("messages") or []
    system = messages[0].get("content") if messages else ""
    if isinstance(system, list):
        system = " ".join(part.get("text", "") for part in system if isinstance(part, dict))
    return next((role for role, marker in ROLE_MARKERS.items() if str(system).startswith(marker)), "unknown")


def _user_text(request: RecordedRequest) -> str:
    texts = []
    for message in request.json["messages"][1:]:
        content = message.get("content")
        if isinstance(content, str):
            texts.append(content)
        elif isinstance(content, list):
            texts += [part.get("text", "") for part in content if isinstance(part, dict) and part.get("type") == "text"]
    return "\n".join(texts)


class FakeModels:
    """Answers each role's requests from the bundled app's reference files."""

    def __init__(self, swap_point: tuple[int, int]):
        spec = load_app(APP)
        self.html = Path(reference_html_path(spec)).read_text(encoding="utf-8")
        self.checkers = {t.description: t.checker for t in spec.tasks}
        self.swap_point = swap_point
        self.lock = threading.Lock()

    def __call__(self, request: RecordedRequest):
        role = role_of(request)
        handler = getattr(self, f"_{role}", None)
        if handler is None:
            return reply_status(400, message=f"test: unrecognised request (role {role})")
        return handler(request)

    def _coder(self, request: RecordedRequest):
        text = _user_text(request)
        if "You wrote this" in text:  # a revision: same page, ids kept, one harmless change
            revised = self.html.replace("</body>", "<!-- revised by the scripted coder -->\n</body>", 1)
            return reply_text(f"Here is the revised app.\n```html\n{revised}\n```\n")
        return reply_text(f"```html\n{self.html}\n```")

    def _proposer(self, request: RecordedRequest):
        tasks = [
            {"description": SWAP, "category": "core_function", "expected_outcome": "From is feet, To is metres.", "level": "easy"},
            {"description": MILES, "category": "core_function", "expected_outcome": "The result reads 8.047.", "level": "easy"},
            {"description": EXPORT, "category": "user_workflow", "expected_outcome": "A PDF is downloaded.", "level": "hard"},
        ]
        return reply_text(json.dumps({"tasks": tasks}))

    def _verifier(self, request: RecordedRequest):
        listed = re.search(r"Tasks \(\d+\):\n(\[.*?\])\n\nJudge", _user_text(request), re.DOTALL)
        verdicts = []
        for task in json.loads(listed.group(1)):
            checker = self.checkers.get(task["description"])
            if checker:
                verdicts.append({"task_id": task["task_id"], "solvable": True, "reason": "the controls exist", "checker": checker})
            else:
                verdicts.append({"task_id": task["task_id"], "solvable": False, "reason": "the app has no PDF export"})
        return reply_text("```json\n" + json.dumps({"verdicts": verdicts}) + "\n```")

    def _uitars(self, request: RecordedRequest):
        messages = request.json["messages"]
        system = messages[0]["content"]
        answered = sum(1 for m in messages if m["role"] == "assistant")
        if SWAP in system and answered == 0:
            x, y = self.swap_point
            return reply_text(f"Thought: The swap button sits between the units.\nAction: click(point='<point>{x} {y}</point>')")
        return reply_text("Thought: I think this is done.\nAction: finished(content='done')")

    def _commenter(self, request: RecordedRequest):
        comment = {
            "issues": ["The agent stopped before converting anything."],
            "actionable_changes": [
                "Give #from-value a visible label so its purpose is clear — interaction robustness",
                "Show the chosen units next to #to-value as text — state visibility",
                "Let #from-unit accept typed unit names — input permissiveness",
            ],
            "fit_within_screen": False,
            "avoid_regressions": True,
        }
        return reply_text(json.dumps(comment))


async def _swap_point_in_model_space() -> tuple[int, int]:
    """Centre of #swap in UI-TARS-1.5 coordinates (pixels of the smart-resized screenshot)."""
    from cua import open_app
    from cua._coordinates import smart_resize

    spec = load_app(APP)
    html = Path(reference_html_path(spec)).read_text(encoding="utf-8")
    async with open_app(html) as app:
        box = await app.page.locator("#swap").bounding_box()
    width, height = 1280, 720
    resized_w, resized_h = smart_resize(width, height)
    x = (box["x"] + box["width"] / 2) * resized_w / width
    y = (box["y"] + box["height"] / 2) * resized_h / height
    return round(x), round(y)


@pytest.mark.timeout(900)
async def test_online_loop_runs_every_role_through_the_openai_client_and_reruns_from_cache(
        tmp_path, prefect_server, monkeypatch):
    # Only Prefect's cache may make the re-run free: the client's own on-disk call cache is off.
    monkeypatch.setenv("AUI_LLM_CACHE", "off")
    fake = FakeModels(await _swap_point_in_model_space())
    with ScriptedOpenAIServer(fake) as server:
        models = tmp_path / "models.yaml"
        models.write_text(yaml.safe_dump({
            "roles": {role: "scripted" for role in ("coder", "proposer", "verifier", "commenter", "cua")},
            "models": [
                {"name": "scripted", "provider": "openai-compatible", "model": "scripted-model",
                 "base_url": server.base_url, "api_key": "sk-scripted", "timeout_s": 60, "max_retries": 1,
                 "prices": {"input_usd_per_1m": 1.0, "output_usd_per_1m": 2.0}},
                {"name": "offline", "provider": "offline"},
            ],
        }))
        config = make_config({
            "name": "online", "app_ids": [APP], "rounds": 1, "revision_modes": ["integrated"],
            "coders": ["scripted"], "proposer": "scripted", "verifier": "scripted", "commenter": "scripted",
            "cua_policies": ["uitars"], "tasks_per_app": 3, "max_steps": 3, "out_dir": str(tmp_path / "runs"),
            "models_config": str(models),
        })

        results = await sweep(config)

        seen = Counter(role_of(r) for r in server.requests)
        assert seen["unknown"] == 0, [r.json for r in server.requests if role_of(r) == "unknown"][:1]
        assert seen["coder"] == 2  # v0 and one revision (ids kept: no contract retry)
        assert seen["proposer"] == 1
        assert seen["verifier"] == 2  # one batch per version
        assert seen["commenter"] == 1  # the one failed rollout of round 0 (the last round is not commented)
        assert seen["uitars"] >= 4  # swap: click (success); miles: finished — in both rounds

        by_round = {r.round: r for r in results}
        assert set(by_round) == {0, 1}
        for result in results:
            outcomes = {t.task_id: t for t in result.tasks}
            assert len(outcomes) == 3
            swap = next(t for t in result.tasks if t.task_id.startswith("swap-the-units"))
            export = next(t for t in result.tasks if t.task_id.startswith("export-all-saved"))
            assert swap.success and swap.termination == "success"
            assert not export.checker_valid and "PDF" in (export.reason or "")
            assert result.offline_roles == []
            assert abs(result.fc - 2 / 3) < 1e-9 and abs(result.sr - 1 / 3) < 1e-9
        run_dir = config.run_dir
        revised = (run_dir / by_round[1].html).read_text(encoding="utf-8")
        assert "revised by the scripted coder" in revised
        assert by_round[1].contract["status"] == "kept"
        feedback = json.loads(next((run_dir / "apps" / APP).rglob("feedback-round-0.json")).read_text())
        assert any("#from-value" in change for change in feedback["actionable_changes"])

        payload = json.loads((run_dir / "results.json").read_text())
        assert {row["round"] for row in payload["table"]} == {0, 1}
        assert payload["offline_roles"] == []
        by_role = payload["usage"]["by_role"]
        assert {"coder", "proposer", "commenter", "cua"} <= set(by_role), by_role
        assert sum(entry["calls"] for entry in by_role.values()) == len(server.requests)
        manifest = json.loads((run_dir / "manifest.json").read_text())
        assert manifest["models"]["scripted"]["endpoint"].startswith("http://127.0.0.1:")
        assert "sk-scripted" not in json.dumps(manifest)

        requests_before, calls_before = len(server.requests), call_stats().calls
        again = await sweep(config)
        assert len(server.requests) == requests_before, "a re-run must not call any model"
        assert call_stats().calls == calls_before
        assert [r.model_dump() for r in again] == [r.model_dump() for r in results]
