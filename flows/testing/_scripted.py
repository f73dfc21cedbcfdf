"""Scripted models for every role of the loop, so the online path runs with no endpoint and no key.

    roles = ScriptedRoles("unit-converter", ["swap-to-feet-metres", "miles-to-km"], clicks={...})
    with ScriptedOpenAIServer(roles) as server:
        models = roles.write_models_yaml(server, tmp_path / "models.yaml")
        config = make_config({"app_ids": ["unit-converter"], **ONLINE_ROLES, "models_config": str(models), ...})

The replies come from the bundled app's own files, through the real `openai` client:

- coder: the reference HTML in an ```html fence; a revision is the same page with a comment
  added before `</body>` (every id and function kept);
- proposer: the chosen tasks of the spec, plus one the app cannot do (`UNSUPPORTED_TASK`);
- verifier: each known task's reference checker and solution, "not solvable" for the others;
- UI-TARS: a click at `clicks[task id]` (UI-TARS-1.5 pixels) on the first turn, else `finished()`;
- commenter: a fixed, valid feedback JSON;
- translator (the `german` variation): each text back as `TRANSLATED_PREFIX` + the text, the shape
  a translation has (one string per text, in order), so a test can tell translated text from kept text;
- judge: "not completed" with confidence 0.5 (the tasks a test picks rarely need it);
- detector (`feedback: [.., defects]`): a defect of type no-response on every tuple it is shown.

Requests are told apart by their system prompts (`role_of`), so the counts per role can be checked.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import yaml

from apps_prompts import load_app, reference_html_path
from cua import BrowserConfig, open_app, smart_resize
from cua.policies import uitars_task_of_request
from llm.testing import RecordedRequest, Reply, ScriptedOpenAIServer, assistant_turns, reply_status, reply_text
from llm.testing import uitars_click, uitars_finished

ROLE_MARKERS = {
    "coder": "You are a front-end engineer",
    "proposer": "You design realistic test tasks",
    "verifier": "You are the verifier",
    "uitars": "You operate a web app in a browser",
    "commenter": "You review a web app for computer-use agents",
    "translator": "You translate the visible text of a web app",
    "judge": "You judge the work of a computer-use agent",
    "detector": "You test the graphical user interface of a web app for defects",
}
UNSUPPORTED_TASK = "Export all saved results as a PDF file."
REVISION_MARK = "<!-- revised by the scripted coder -->"
TRANSLATED_PREFIX = "DE·"
ONLINE_ROLES = {"coders": ["scripted"], "proposer": "scripted", "verifier": "scripted", "commenter": "scripted",
                "judge": "scripted", "detector": "scripted", "cua_policies": ["uitars"]}
"""Config fields that send every role to the `scripted` model of `write_models_yaml`."""

COMMENT = {
    "issues": ["The agent stopped before the task was done."],
    "actionable_changes": [
        "Give every `button` a visible text label — interaction robustness",
        "Show each result as text next to its `input` at once — state visibility",
        "Let every `select` also accept typed values — input permissiveness",
    ],
    "fit_within_screen": False,
    "avoid_regressions": True,
}
"""The commenter's feedback (`LatencyRoles`' too, with an issue of its own)."""


def role_of(request: RecordedRequest) -> str:
    """Which role sent `request` (by its system prompt; UI-TARS by its prompt's own layout), or "unknown"."""
    messages = (request.json or {}).get("messages") or []
    if uitars_task_of_request(messages) is not None:
        return "uitars"
    system = messages[0].get("content") if messages else ""
    if isinstance(system, list):
        system = " ".join(part.get("text", "") for part in system if isinstance(part, dict))
    return next((role for role, marker in ROLE_MARKERS.items() if str(system).startswith(marker)), "unknown")


def user_text(request: RecordedRequest) -> str:
    """The text of every user turn of a recorded chat request (system prompt excluded)."""
    texts = []
    for message in request.json["messages"][1:]:
        content = message.get("content")
        if isinstance(content, str):
            texts.append(content)
        elif isinstance(content, list):
            texts += [part.get("text", "") for part in content if isinstance(part, dict) and part.get("type") == "text"]
    return "\n".join(texts)


class ScriptedRoles:
    """A `ScriptedOpenAIServer` script (a callable) playing every model role: coder, proposer, verifier, UI-TARS,
    commenter, translator, judge and detector."""

    def __init__(self, app_id: str, task_ids: list[str], clicks: dict[str, tuple[int, int]] | None = None):
        spec = load_app(app_id)
        by_id = {t.id: t for t in spec.tasks}
        unknown = sorted(set(task_ids) - set(by_id))
        if unknown:
            raise ValueError(f"ScriptedRoles: app {app_id!r} has no tasks {unknown}; it has {sorted(by_id)}")
        self.html = Path(reference_html_path(spec)).read_text(encoding="utf-8")
        self.tasks = [by_id[t] for t in task_ids]
        self.checkers = {t.description: t.checker for t in self.tasks}
        self.solutions = {t.description: [s.model_dump(exclude_none=True) for s in t.solution] for t in self.tasks}
        self.clicks = {by_id[t].description: point for t, point in (clicks or {}).items()}

    def __call__(self, request: RecordedRequest) -> Reply:
        role = role_of(request)
        handler = getattr(self, f"_{role}", None)
        if handler is None:
            return reply_status(400, message=f"ScriptedRoles: unrecognised request (role {role})")
        return handler(request)

    def write_models_yaml(self, server: ScriptedOpenAIServer, path: Path) -> Path:
        """A model registry with every role on the `scripted` model at `server` (and `offline`)."""
        # a time limit a loaded machine meets: a call timed out and sent again would be counted twice
        scripted = {"name": "scripted", "provider": "openai-compatible", "model": "scripted-model",
                    "base_url": server.base_url, "api_key": "sk-scripted", "timeout_s": 120, "max_retries": 1,
                    "prices": {"input_usd_per_1m": 1.0, "output_usd_per_1m": 2.0}}
        roles = ("coder", "proposer", "verifier", "commenter", "cua", "translator", "judge", "detector")
        return write_registry(path, dict.fromkeys(roles, "scripted"), [scripted])

    def _coder(self, request: RecordedRequest) -> Reply:
        return coder_reply(self.html, user_text(request), REVISION_MARK)

    def _proposer(self, request: RecordedRequest) -> Reply:
        tasks = [{"description": t.description, "category": t.category.value, "expected_outcome": t.expected_outcome,
                  "level": t.level.value if t.level else "bronze", "level_rationale": t.level_rationale or "scripted"}
                 for t in self.tasks]
        tasks.append({"description": UNSUPPORTED_TASK, "category": "user_workflow",
                      "expected_outcome": "A PDF file is downloaded.", "level": "silver",
                      "level_rationale": "scripted: an export the app does not have"})
        return reply_text(json.dumps({"tasks": tasks}))

    def _verifier(self, request: RecordedRequest) -> Reply:
        verdicts = []
        for task in listed_tasks(user_text(request)):
            checker = self.checkers.get(task["description"])
            if checker:
                verdicts.append({"task_id": task["task_id"], "solvable": True, "reason": "the controls exist",
                                 "checker": checker, "solution": self.solutions[task["description"]]})
            else:
                verdicts.append({"task_id": task["task_id"], "solvable": False, "reason": "the app has no PDF export"})
        return reply_text("```json\n" + json.dumps({"verdicts": verdicts}) + "\n```")

    def _uitars(self, request: RecordedRequest) -> Reply:
        task = uitars_task_of_request(request.json["messages"]) or ""
        if task in self.clicks and assistant_turns(request) == 0:
            return reply_text(uitars_click(*self.clicks[task], thought="The control for this is right there."))
        return reply_text(uitars_finished("done", thought="I think this is done."))

    def _commenter(self, request: RecordedRequest) -> Reply:
        return reply_text(json.dumps(COMMENT))

    def _judge(self, request: RecordedRequest) -> Reply:
        return reply_text(json.dumps({"success": False, "reason": "The expected outcome is not shown.", "confidence": 0.5}))

    def _detector(self, request: RecordedRequest) -> Reply:
        return reply_text(json.dumps({"defect": True, "type": "no-response", "evidence": "Nothing changed on the screen."}))

    def _translator(self, request: RecordedRequest) -> Reply:
        texts = json.loads(user_text(request))["texts"]
        return reply_text(json.dumps({"translations": [TRANSLATED_PREFIX + text for text in texts]}, ensure_ascii=False))


async def click_point(app_id: str, selector: str) -> tuple[int, int]:
    """The centre of `selector` on the app's reference page, in UI-TARS-1.5 pixels (smart-resized screenshot)."""
    spec = load_app(app_id)
    html = Path(reference_html_path(spec)).read_text(encoding="utf-8")
    async with open_app(html) as app:
        box = await app.page.locator(selector).bounding_box()
    return uitars_point(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2, BrowserConfig().viewport)


def uitars_point(x: float, y: float, viewport) -> tuple[int, int]:
    """A point of the page (CSS pixels in `viewport`) in UI-TARS-1.5 pixels (the smart-resized screenshot's)."""
    width, height = viewport.width, viewport.height
    resized_width, resized_height = smart_resize(width, height)
    return round(x * resized_width / width), round(y * resized_height / height)


def write_registry(path: Path, roles: dict[str, str], models: list[dict]) -> Path:
    """A model registry YAML at `path`: `roles` and `models`, and the `offline` model."""
    models = [*models, {"name": "offline", "provider": "offline"}]
    path.write_text(yaml.safe_dump({"roles": roles, "models": models}), encoding="utf-8")
    return path


def coder_reply(html: str, prompt: str, mark: str) -> Reply:
    """The page in an ```html fence; a revision (its prompt shows the coder its own page) is `html` with `mark`
    added before `</body>`."""
    if "You wrote this" in prompt:
        revised = html.replace("</body>", f"{mark}\n</body>", 1)
        return reply_text(f"Here is the revised app.\n```html\n{revised}\n```\n")
    return reply_text(f"```html\n{html}\n```")


def listed_tasks(prompt: str) -> list[dict]:
    """The tasks a verifier's prompt lists (task_id, description, …)."""
    listed = re.search(r"Tasks \(\d+\):\n(\[.*?\])\n\nJudge", prompt, re.DOTALL)
    return json.loads(listed.group(1)) if listed else []
