"""Every role of the loop, played on real apps by a `llm.testing.LatencyOpenAIServer`: for benchmarks
at model speed (coder ≈ 30 s, CUA 1 s a step) with no model, through the real `openai` client.

    plans = await plan_apps({"unit-converter": (html, spec_tasks)})          # one browser pass per app
    roles = LatencyRoles(plans, prompts={"unit-converter": spec.prompt_text()})
    with LatencyOpenAIServer(roles, role_latencies()) as server:
        write_latency_models(server, tmp / "models.yaml")

What each role answers (all schema-valid, all about the app the request is for):

- coder: the app's HTML (a revision: the same page with a comment added);
- proposer: the app's known tasks (a spec's or a tasks file's, with their checkers and solutions),
  then tasks made from the controls on its page — type a value into a field, tick a box, pick an
  option — each with a checker and a solution that prove it, up to the number asked for;
- verifier: those checkers and solutions (`solvable: false` for a task it does not know);
- CUA (UI-TARS grammar): `solve` plays the task's solution at the points where its elements are on
  the loaded page (a click, a click and `type`, a `hotkey`), then `finished`; `explore` clicks the
  page's visible controls in turn and never finishes (fixed-length rollouts for throughput);
- commenter: a fixed, valid feedback document.

Requests are told apart by their system prompts (`role_of`) and their app by its
prompt text; each role is its own model id (`latency-coder`, …), so the server's latency — and a
model's `max_concurrency` — is per role.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from apps_prompts import Task
from cua import DEFAULT_VIEWPORT, BrowserConfig, open_app
from cua.policies import uitars_task_of_request
from llm import Latency
from llm.testing import assistant_turns, reply_status, reply_text, uitars_click, uitars_finished, uitars_type

from ._scripted import COMMENT as SCRIPTED_COMMENT
from ._scripted import coder_reply, listed_tasks, role_of, uitars_point, user_text, write_registry

_CONTROLS_JS = Path(__file__).with_name("_latency_controls.js").read_text(encoding="utf-8")

ROLE_MODELS = {"coder": "latency-coder", "proposer": "latency-proposer", "verifier": "latency-verifier",
               "commenter": "latency-commenter", "cua": "latency-cua", "judge": "latency-judge"}
"""The model id each role is served under (the server's latency is chosen by it)."""

PAPER_LATENCIES_S = {"coder": 30.0, "proposer": 10.0, "verifier": 10.0, "commenter": 5.0, "cua": 1.0, "judge": 5.0}
"""Mean latencies per role for a round at model speed (issue 19's figures)."""

LATENCY_ROLES = {"coders": [ROLE_MODELS["coder"]], "proposer": ROLE_MODELS["proposer"],
                 "verifier": ROLE_MODELS["verifier"], "commenter": ROLE_MODELS["commenter"],
                 "cua_policies": ["uitars"], "cua_model": ROLE_MODELS["cua"]}
"""Config fields that send every role to its model of `write_latency_models`."""

REVISION_MARK = "<!-- revised by the latency coder -->"
COMMENT = {**SCRIPTED_COMMENT, "issues": ["The agent did not reach the task's end state."]}


@dataclass
class PlannedTask:
    """One task the proposer gives, with what the verifier and the CUA answer for it."""

    description: str
    category: str
    expected_outcome: str
    level: str
    level_rationale: str
    checker: str | None
    solution: list[dict[str, Any]]
    answer: dict[str, Any] | None = None
    actions: list[str] = field(default_factory=list)
    """The CUA's replies in turn (UI-TARS text), `finished` last."""

    def proposal(self) -> dict[str, Any]:
        return {"description": self.description, "category": self.category, "expected_outcome": self.expected_outcome,
                "level": self.level, "level_rationale": self.level_rationale}


@dataclass
class AppPlan:
    """An app's page, its controls (UI-TARS-1.5 points) and the tasks its proposer gives."""

    app_id: str
    html: str
    tasks: list[PlannedTask]
    controls: list[tuple[int, int]]


async def plan_app(app_id: str, html: str, known: list[Task], *, count: int = 30, viewport=None) -> AppPlan:
    """`app_id`'s plan: its `known` tasks first, then tasks made from its page's controls, `count` in all.

    One page load in this process's browser; every point is where the element is on the loaded page.
    """
    viewport = viewport or DEFAULT_VIEWPORT
    points: dict[str, tuple[int, int] | None] = {}
    async with open_app(html, BrowserConfig(viewport=viewport)) as app:
        controls = await app.page.evaluate(_CONTROLS_JS)
        for task in known:
            for step in task.solution:
                if step.selector in points:
                    continue
                try:
                    box = await app.page.locator(step.selector).first.bounding_box(timeout=300)
                except Exception:  # a selector of a later state, or none on the page: the CUA will miss it
                    box = None
                inside = box and 0 <= box["x"] + box["width"] / 2 < viewport.width and 0 <= box["y"] + box["height"] / 2 < viewport.height
                points[step.selector] = uitars_point(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2,
                                                      viewport) if inside else None
    for control in controls:
        points.setdefault(control["selector"], uitars_point(control["x"], control["y"], viewport))

    def actions_for(solution: list[dict[str, Any]], answer: str | None) -> list[str]:
        replies = []
        for step in solution:
            point = points.get(step["selector"])
            if step["action"] == "wait":
                replies.append("Thought: The app works on its own now.\nAction: wait()")
            elif point is None:
                continue  # not on the first screen: skipped, as a hurried agent would
            elif step["action"] == "press":
                replies.append(f"Thought: I press the key.\nAction: hotkey(key='{str(step.get('value', 'enter')).lower()}')")
            else:
                replies.append(uitars_click(*point, thought=f"I use {step['selector'][:60]}."))
                if step["action"] == "fill":  # a fill replaces the text: select it all, then type
                    replies.append("Thought: I select the field's text.\nAction: hotkey(key='ctrl a')")
                    replies.append(uitars_type(str(step.get("value", ""))))
        return [*replies, uitars_finished(answer or "done")]

    planned: list[PlannedTask] = []
    for task in known:
        answer = next((check for check in task.checks if check.kind == "answer"), None)
        solution = [step.model_dump(exclude_none=True) for step in task.solution]
        planned.append(PlannedTask(
            task.description, task.category.value, task.expected_outcome, task.level.value if task.level else "wood",
            task.level_rationale or "from the task's source", task.checker, solution,
            {"expected": answer.expected, "match": answer.match, "tolerance": answer.tolerance} if answer else None))
    planned += _control_tasks(controls, count - len(planned))
    for task in planned:
        task.actions = actions_for(task.solution, task.answer["expected"] if task.answer else None)
    return AppPlan(app_id, html, planned[:count], [points[c["selector"]] for c in controls if points.get(c["selector"])])


def _control_tasks(controls: list[dict[str, Any]], wanted: int) -> list[PlannedTask]:
    """Tasks a user could do with these controls, each with a checker that is false on the loaded page."""
    texts = [c for c in controls if (c["tag"] == "textarea" or (c["tag"] == "input" and c["type"] in (
        "", "text", "search", "email", "number", "tel", "url", "password")))]
    boxes = [c for c in controls if c["tag"] == "input" and c["type"] in ("checkbox", "radio") and not c["checked"]]
    selects = [c for c in controls if c["tag"] == "select" and len(set(c["options"])) > 1]

    def task(description: str, outcome: str, holds: str, step: dict[str, Any]) -> PlannedTask:
        """A one-step task whose checker is that the step's element `holds` (e.g. `value === "x"`)."""
        return PlannedTask(description, "core_function", outcome, "paper", f"1 step ({step['action']}) → paper",
                           f"return document.querySelector({json.dumps(step['selector'])})?.{holds};", [step])

    made: list[PlannedTask] = []
    round_ = 0
    while len(made) < wanted and (texts or boxes or selects):
        round_ += 1
        for control in texts:
            value = {"number": str(40 + round_), "email": f"ada{round_}@example.com"}.get(control["type"],
                                                                                         f"AUI test {round_}")
            made.append(task(f"Type '{value}' into the {control['label'] or 'text'} field.",
                             f"The {control['label'] or 'text'} field shows '{value}'.",
                             f"value === {json.dumps(value)}",
                             {"action": "fill", "selector": control["selector"], "value": value}))
        if round_ == 1:
            for control in boxes:
                made.append(task(f"Select the '{control['label']}' option.", f"'{control['label']}' is selected.",
                                 "checked === true", {"action": "click", "selector": control["selector"]}))
        for control in selects:
            options = [o for o in dict.fromkeys(control["options"]) if o != control["value"]]
            if len(options) < round_:
                continue
            option = options[round_ - 1]
            made.append(task(f"Choose '{option}' in the {control['label'] or 'drop-down'} list.",
                             f"The {control['label'] or 'drop-down'} list shows '{option}'.",
                             f"value === {json.dumps(option)}",
                             {"action": "select", "selector": control["selector"], "value": option}))
        if round_ > wanted:
            break
    return made[:max(wanted, 0)]


async def plan_apps(apps: dict[str, tuple[str, list[Task]]], *, count: int = 30, viewport=None) -> dict[str, AppPlan]:
    """`plan_app` for each app id → (html, known tasks); apps with the same page share one plan's work."""
    plans: dict[str, AppPlan] = {}
    by_page: dict[str, AppPlan] = {}
    for app_id, (html, known) in apps.items():
        key = hashlib.sha256(html.encode("utf-8") + json.dumps([t.id for t in known]).encode()).hexdigest()
        if key not in by_page:
            by_page[key] = await plan_app(app_id, html, known, count=count, viewport=viewport)
        plans[app_id] = replace(by_page[key], app_id=app_id)
    return plans


class LatencyRoles:
    """A `LatencyOpenAIServer` answer playing every role on the apps of `plans` (see the module's doc).

    `prompts` maps each app id to its prompt text (what the coder and the proposer are shown), by
    which a request's app is found. `cua="explore"` clicks controls in turn and never finishes.
    """

    def __init__(self, plans: dict[str, AppPlan], prompts: dict[str, str],
                 cua: Literal["solve", "explore"] = "solve") -> None:
        self.plans = plans
        self.cua = cua
        # The longest prompts first: one app's prompt may be contained in another's.
        self._prompts = sorted(((text.strip(), app_id) for app_id, text in prompts.items()), key=lambda p: -len(p[0]))
        self._tasks = {task.description: task for plan in plans.values() for task in plan.tasks}
        self._task_app = {task.description: plan.app_id for plan in plans.values() for task in plan.tasks}
        self.unrecognised = 0

    def explore(self, app_id: str, descriptions: list[str]) -> None:
        """Tasks given to the CUA by description alone (no proposer): explore `app_id`'s controls for them."""
        self._task_app.update({description: app_id for description in descriptions})

    def __call__(self, request):
        role = role_of(request)
        if role == "uitars":
            return reply_text(self._cua(request, assistant_turns(request)))
        if role == "commenter":
            return reply_text(json.dumps(COMMENT))
        if role == "verifier":
            return reply_text("```json\n" + json.dumps({"verdicts": self._verdicts(user_text(request))}) + "\n```")
        text = user_text(request)
        plan = self._app_of(text)
        if plan is None or role not in ("coder", "proposer"):
            self.unrecognised += 1
            return reply_status(400, message=f"LatencyRoles: no app or role recognised (role {role})")
        if role == "coder":
            return coder_reply(plan.html, text, REVISION_MARK)
        wanted = re.search(r"Propose (\d+) distinct tasks", text)
        count = int(wanted.group(1)) if wanted else len(plan.tasks)
        listed = set(re.findall(r"^- (.+)$", text.split("Do not repeat these tasks:", 1)[1], re.M)) \
            if "Do not repeat these tasks:" in text else set()
        tasks = [t.proposal() for t in plan.tasks if t.description not in listed][:count]
        # A page with fewer tasks than asked for has none left for a top-up: one it already has (the
        # proposer drops it as a duplicate) keeps the reply valid, as a real model's repeat would be.
        return reply_text(json.dumps({"tasks": tasks or [plan.tasks[0].proposal()]}))

    def _app_of(self, text: str) -> AppPlan | None:
        app_id = next((app_id for prompt, app_id in self._prompts if prompt and prompt in text), None)
        return self.plans.get(app_id) if app_id else None

    def _verdicts(self, text: str) -> list[dict[str, Any]]:
        verdicts = []
        for item in listed_tasks(text):
            task = self._tasks.get(item.get("description", ""))
            if task is None or not task.checker:
                verdicts.append({"task_id": item["task_id"], "solvable": False,
                                 "reason": "the page has no control for this"})
                continue
            # a checker's code, or (no `return`) a rule
            written = {"checker": task.checker} if "return" in task.checker else {"rule": task.checker.strip()}
            verdict = {"task_id": item["task_id"], "solvable": True, "reason": "the controls it needs are on the page",
                       **written, "solution": task.solution}
            if task.answer and item.get("asks_for_answer"):
                verdict["answer"] = {k: v for k, v in task.answer.items() if v is not None}
            verdicts.append(verdict)
        return verdicts

    def _cua(self, request, turn: int) -> str:
        description = uitars_task_of_request(request.json.get("messages") or []) or ""
        task = self._tasks.get(description)
        plan = self.plans.get(self._task_app.get(description, ""))
        if self.cua == "explore":
            controls = plan.controls if plan and plan.controls else [(100, 100)]
            offset = int(hashlib.sha256(description.encode()).hexdigest(), 16) % len(controls)
            return uitars_click(*controls[(offset + turn) % len(controls)], thought="I try the next control.")
        if task is None:
            return uitars_finished("I could not find this task's controls.")
        return task.actions[min(turn, len(task.actions) - 1)]


def role_latencies() -> dict[str, Latency]:
    """`LatencyOpenAIServer` latencies by model id: each role's mean of `PAPER_LATENCIES_S`, lognormal (σ 0.3) but
    the CUA's, which is fixed (its steps are what throughput is measured in)."""
    return {model: Latency.fixed(PAPER_LATENCIES_S[role]) if role == "cua" else
            Latency.lognormal(PAPER_LATENCIES_S[role], 0.3) for role, model in ROLE_MODELS.items()}


def write_latency_models(server, path: Path, *, max_concurrency: dict[str, int] | None = None,
                         timeout_s: float = 300.0) -> Path:
    """A model registry with one model per role at `server` (ids `ROLE_MODELS`), priced, with optional
    `max_concurrency` per role."""
    models = [{"name": model, "provider": "openai-compatible", "model": model, "base_url": server.base_url,
               "api_key": "sk-latency", "timeout_s": timeout_s, "max_retries": 1,
               "prices": {"input_usd_per_1m": 1.25, "output_usd_per_1m": 10.0},
               **({"max_concurrency": max_concurrency[role]} if role in (max_concurrency or {}) else {})}
              for role, model in ROLE_MODELS.items()]
    return write_registry(path, dict(ROLE_MODELS), models)
