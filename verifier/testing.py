"""A planted corpus of checkers that are never true, or whose truth cannot be shown, on the bundled apps.

Each entry is what a verifier model might send for one bundled task: a constant-false body, an
impossible value, a selector the app never renders, a contradictory rule, a solution step on a
missing element, a solution that leaves the checker false, a state the solution cannot reach,
no solution at all, and checkers the gate rejects. `run_planted_corpus()` sends them through the
real `openai` client to a local scripted server (the repair reply scripted to stay bad): every
planted task must end `claimed` or `unsupported`, never `proven`. Used by the tests
(tests/verifier/test_planted_checkers.py) and by `bench/judges.py`.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
from dataclasses import dataclass
from pathlib import Path

from apps_prompts import Task, load_app
from llm import CallCache, ModelClient
from llm.testing import ScriptedOpenAIServer, reply_text, scripted_registry

from ._llm import LLMVerifierConfig
from ._verify import verify_app

REPAIR_MARK = "These tasks did not pass"
"""Words only the verifier's repair message carries (how the scripted model tells it from a first request)."""


def reference_entry(task: Task) -> dict:
    """The spec's own checker, answer check and solution, as a verifier model would send them."""
    entry = {"task_id": task.id, "solvable": True, "reason": "reference",
             "solution": [step.model_dump(exclude_none=True) for step in task.solution]}
    if task.checker:
        entry["checker"] = task.checker
    if task.answer_check is not None:
        entry["answer"] = task.answer_check.model_dump(exclude={"kind"})
    return entry


def request_text(request, index: int = -1) -> str:
    """The text of one message of a recorded request (default: the last)."""
    content = request.json["messages"][index]["content"]
    return content if isinstance(content, str) else " ".join(p.get("text", "") for p in content)


def is_repair(request) -> bool:
    return REPAIR_MARK in request_text(request)


# A wrong selector fails sooner than in production (10 s), yet a right one still acts on a loaded machine.
CONFIG = LLMVerifierConfig(proof_step_timeout_ms=5_000)


def real(app: str, task: str):
    return next(t for t in load_app(app).tasks if t.id == task)


def real_solution(app: str, task: str) -> list[dict]:
    return reference_entry(real(app, task))["solution"]


@dataclass(frozen=True)
class Planted:
    app: str
    task: str
    kind: str
    entry: dict  # what the model sends for the task (task_id and solvable are added)
    ends: str  # "claimed" (passes the gate, never proven) or "unsupported" (fails the gate)
    says: tuple[str, ...] = ()  # fragments the repair message must carry for this task
    static: bool = False  # the static pass must flag it (and only these are flagged)


def checker(app: str, task: str, source: str, solution: list[dict] | None = None) -> dict:
    return {"checker": source, "solution": real_solution(app, task) if solution is None else solution}


def rule(app: str, task: str, source: str) -> dict:
    return {"rule": source, "solution": real_solution(app, task)}


UC, MC, PG, TW = "unit-converter", "mortgage-calculator", "password-generator", "tiny-wins-habits"
RETURNED_FALSE = "the checker returned false after the replay"
PLANTED = [
    # never true, whatever the page does
    Planted(UC, "miles-to-km", "constant false", checker(UC, "miles-to-km", "return false;"), "claimed",
            (RETURNED_FALSE, "warning: every return"), static=True),
    Planted(MC, "price-500k", "constant zero", checker(MC, "price-500k", "return 0;"), "claimed",
            ("the checker returned a falsy number after the replay",), static=True),
    Planted(PG, "length-24", "constant null", checker(PG, "length-24", "return null;"), "claimed",
            ("the checker returned null after the replay",), static=True),
    Planted(PG, "eight-digit-pin", "every return constant falsy",
            checker(PG, "eight-digit-pin", "if (document.querySelector('#length')?.value === '8') { return false; }\nreturn '';"),
            "claimed", ("after the replay",), static=True),
    Planted(UC, "celsius-to-fahrenheit", "impossible value", rule(UC, "celsius-to-fahrenheit", "#to-value == 'boiling'"),
            "claimed", (RETURNED_FALSE, "'#to-value' shows text '212.000'")),
    Planted(UC, "five-decimals", "selector the app never renders",
            checker(UC, "five-decimals", "return document.querySelector('#precision-badge')?.textContent === '5 decimals';"),
            "claimed", ("'#precision-badge' matches nothing", "appears nowhere in the app's HTML"), static=True),
    Planted(UC, "swap-to-feet-metres", "contradictory rule: one value, two strings",
            rule(UC, "swap-to-feet-metres", "#from-unit == 'ft' AND #from-unit == 'm'"), "claimed",
            ("the rule can never be true",), static=True),
    Planted(MC, "rate-5-percent", "contradictory rule: X AND NOT X",
            rule(MC, "rate-5-percent", "#rate-out == '5.00%' AND NOT #rate-out == '5.00%'"), "claimed", (RETURNED_FALSE,), static=True),
    Planted(MC, "fifteen-year-term", "contradictory rule: empty numeric range",
            rule(MC, "fifteen-year-term", "#monthly-payment > 5000 AND #monthly-payment < 100"), "claimed",
            ("no number satisfies them",), static=True),
    Planted(PG, "avoid-lookalikes", "contradictory rule: missing and read",
            rule(PG, "avoid-lookalikes", "NOT #no-ambiguous exists AND #no-ambiguous checked"), "claimed",
            ("both present and missing",), static=True),
    Planted(TW, "add-drink-water", "contradictory JS bounds",
            checker(TW, "add-drink-water", "const n = document.querySelectorAll('#habits .habit').length; return n > 5 && n < 3;"),
            "claimed", ("no number satisfies these bounds",), static=True),
    Planted(MC, "first-home-scenario", "true only in a state the app cannot reach (a 40-year term)",
            checker(MC, "first-home-scenario", "return document.querySelector('#term-label')?.textContent.trim() === '40-year fixed';"),
            "claimed", (RETURNED_FALSE, "'#term-label' shows text '30-year fixed'")),
    # a solution that does not prove a correct checker
    Planted(UC, "save-kg-to-lb", "solution step on a missing selector",
            checker(UC, "save-kg-to-lb", real(UC, "save-kg-to-lb").checker,
                    real_solution(UC, "save-kg-to-lb")[:-1] + [{"action": "click", "selector": "#save-conversion"}]),
            "claimed", ("solution step 6 (click #save-conversion) failed", "no element matches '#save-conversion'")),
    Planted(UC, "below-absolute-zero", "no solution given", {"checker": real(UC, "below-absolute-zero").checker},
            "claimed", ("could not be proven: no solution was given",)),
    Planted(UC, "clear-saved", "solution that leaves the checker false",
            checker(UC, "clear-saved", real(UC, "clear-saved").checker, [{"action": "hover", "selector": "#category-menu"}]),
            "claimed", (RETURNED_FALSE, "'#history-empty' shows")),
    Planted(MC, "no-down-payment", "solution step without its value",
            checker(MC, "no-down-payment", real(MC, "no-down-payment").checker, [{"action": "fill", "selector": "#down-pct"}]),
            "claimed", ("fill, press and select steps need a 'value'",)),
    Planted(PG, "no-symbols", "solution step with an invalid selector",
            checker(PG, "no-symbols", real(PG, "no-symbols").checker, [{"action": "click", "selector": "#opt-symbols["}]),
            "claimed", ("solution step 1 (click #opt-symbols[) failed", "css selector")),
    Planted(PG, "max-security-preset", "solution waits for an element that never appears",
            checker(PG, "max-security-preset", real(PG, "max-security-preset").checker,
                    [{"action": "hover", "selector": "#presets-menu"}, {"action": "wait", "selector": "#preset-applied", "value": 1}]),
            "claimed", ("solution step 2 (wait #preset-applied) failed",)),
    Planted(TW, "tick-read-wednesday", "solution selects on an element that is not a <select>",
            checker(TW, "tick-read-wednesday", real(TW, "tick-read-wednesday").checker,
                    [{"action": "select", "selector": '#habit-read-20-pages .cell[data-day="wed"]', "value": "wed"}]),
            "claimed", ("is not a <select> element",)),
    Planted(TW, "meditate-streak", "solution presses a key that does not exist",
            checker(TW, "meditate-streak", real(TW, "meditate-streak").checker,
                    [{**step, "value": "Submit"} if step["action"] == "press" else step for step in real_solution(TW, "meditate-streak")]),
            "claimed", ("Unknown key", "solution step 2 (press #new-habit)")),
    # checkers the gate rejects: nothing to prove
    Planted(MC, "property-tax", "reads an app global", checker(MC, "property-tax", "return window.mortgageState?.tax === 4800;"),
            "unsupported", ("rejected by the validation gate", "window.mortgageState")),
    Planted(MC, "open-amortization", "true at load", checker(MC, "open-amortization", "return document.querySelector('#price') !== null;"),
            "unsupported", ("already true on the freshly loaded app",)),
    Planted(MC, "zero-percent-loan", "throws at load",
            checker(MC, "zero-percent-loan", "return document.querySelector('#zero-note').textContent === 'No interest';"),
            "unsupported", ("throws on the loaded app", "warning: selector '#zero-note'"), static=True),
    Planted(PG, "save-bank-password", "changes the page",
            checker(PG, "save-bank-password",
                    "document.querySelector('#vault-label').value = 'Bank'; return document.querySelectorAll('.vault-item').length > 0;"),
            "unsupported", ("a checker may only read the page",)),
    Planted(PG, "no-character-types", "does not compile",
            checker(PG, "no-character-types", "return (document.querySelector('#password')?.value === '';"),
            "unsupported", ("does not compile",)),
    Planted(PG, "vault-needs-label", "rule that does not parse", rule(PG, "vault-needs-label", "#vault-error contains"),
            "unsupported", ("the rule does not parse",)),
]
APPS = sorted({p.app for p in PLANTED})


def planted_for(app: str) -> dict[str, dict]:
    return {p.task: {"task_id": p.task, "solvable": True, "reason": p.kind, **p.entry} for p in PLANTED if p.app == app}


def first_reply(app: str) -> list[dict]:
    """Every task of the app: the planted entry where there is one, else the spec's reference."""
    planted = planted_for(app)
    return [planted.get(task.id) or reference_entry(task) for task in load_app(app).tasks]


def scripted_verifier(fixed: dict[str, dict] | None = None):
    """First reply per app as planted; the repair reply repeats the entries asked about, or `fixed` ones."""
    titles = {load_app(app).title: app for app in APPS}

    def script(request):
        app = next(app for title, app in titles.items() if f"App: {title}" in request_text(request, 1))
        entries = {entry["task_id"]: entry for entry in first_reply(app)} | (fixed or {})
        if is_repair(request):
            asked = [entry for task_id, entry in entries.items() if f"- task {task_id}:" in request_text(request)]
            return reply_text(json.dumps({"verdicts": asked}))
        return reply_text(json.dumps({"verdicts": first_reply(app)}))

    return script


async def verify_apps(server, tmp_path: Path) -> dict:
    """Every app of the corpus verified by the scripted model at `server`: app id → `AppVerdicts`."""
    client = ModelClient(scripted_registry(server), cache=CallCache(tmp_path / "cache", enabled=False))
    results = await asyncio.gather(*(verify_app(load_app(app), verifier="scripted", client=client, config=CONFIG) for app in APPS))
    return dict(zip(APPS, results))


@dataclass(frozen=True)
class PlantedOutcome:
    kind: str
    app: str
    task: str
    expected: str
    proof: str


async def run_planted_corpus() -> list[PlantedOutcome]:
    """Verify the corpus's apps through a scripted verifier model; how each planted checker ended."""
    with tempfile.TemporaryDirectory(prefix="planted-") as folder, ScriptedOpenAIServer(scripted_verifier()) as server:
        verdicts = await verify_apps(server, Path(folder))
    return [PlantedOutcome(kind=p.kind, app=p.app, task=p.task, expected=p.ends, proof=verdicts[p.app].verdict(p.task).proof)
            for p in PLANTED]
