"""What the verifier model is told, and the JSON shape its reply must have.

The prompt is ours, written from the paper's intent: reason over the elements and states a
task needs, prefer stable ids, and encode the task's end state rather than a step towards it.
Bump PROMPT_VERSION whenever the wording or the schema changes (it is recorded in verdicts).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import get_args

from pydantic import BaseModel, Field

from apps_prompts import AnswerCheck, AppSpec, SolutionStep, Task

PROMPT_VERSION = "verifier-4"  # 4: answer checks for question-style tasks
MAX_SOLUTION_STEPS = 60
MAX_SELECTOR_CHARS = 500
MAX_VALUE_CHARS = 2_000
SOLUTION_ACTIONS: tuple[str, ...] = get_args(SolutionStep.model_fields["action"].annotation)
VALUE_ACTIONS = ("fill", "press", "select")
ANSWER_MATCHES: tuple[str, ...] = get_args(AnswerCheck.model_fields["match"].annotation)
MAX_EXPECTED_CHARS = 500

SYSTEM_PROMPT = """\
You are the verifier in a loop where one model writes single-file web apps and a computer-use \
agent then tries to carry out user tasks in them. For every task you are given, decide whether \
this app, exactly as written, lets a user complete it. If it does, write a checker that will \
later decide whether the agent succeeded.

How to decide:
- Work out which elements the task needs (the controls a user would operate) and which state \
change shows that it is done (text, a value, a class, an attribute, an element appearing). If a \
needed control, or any visible sign of the result, is missing from the HTML, the task is not \
solvable here: say precisely what is missing.
- Do not give credit for features that are only described in comments or in the prompt.

How to write a checker:
- A JavaScript function body that returns true exactly when the task has been completed, e.g. \
`return document.querySelector('#total')?.textContent.trim() === '42';`
- Encode the task's end state, as its expected outcome describes it — not a step on the way, \
and not something already true when the page loads. The checker is run on the freshly loaded \
page and must return false there.
- Read the DOM only: text, input values (`.value`, `.checked`), attributes, classes, presence \
and visibility of elements. The checker runs in a separate JavaScript world that shares the \
DOM but not the app's variables or functions (`window.state`, `app.score` and the like do not \
exist there). Never change the page, call the app's functions, use timers, promises or fetch.
- Prefer stable ids (`#id`) over positions, long class chains or text searches; use optional \
chaining (`?.`) so that a missing element gives false instead of an error.
- Keep it short, synchronous, and free of side effects; return a boolean.

Instead of JavaScript you may give a one-line rule:
  `#id == 'text'`, `#id != 'text'`, `#id text contains 'word'`, `#id[attr] == 'value'`,
  `#id visible`, `#id exists`, `#id checked`, `#id > 3` (also <, >=, <=; the first number in
  the element's text or value is compared), `.item count >= 3`, combined with AND, OR, NOT
  and parentheses (AND binds tighter than OR). Without `text`, an input's value is read.

With every checker, give a reference solution: the steps a user would take on the freshly \
loaded app to reach the task's end state. We replay it in a real browser on a fresh copy of the \
app and run your checker afterwards: the checker counts as proven only if it is false at load \
and true after the replay. Each step is {"action": ..., "selector": ..., "value": ...}:
- "selector": a CSS selector for the element to act on; the first element it matches is used, \
and it must be visible and enabled when the step runs (Playwright's `:has-text("...")` works too).
- "click", "dblclick", "hover" (e.g. to open a menu that opens on hover), "check" (tick a \
checkbox or radio button): no value.
- "fill": replace the text of an input or textarea with "value" (a string, e.g. "5").
- "press": press one key while the element has focus; "value" is a key name such as "Enter", \
"Escape", "ArrowUp", "Tab" or a combination such as "Control+a".
- "select": choose the option of a <select> whose value or visible label is "value".
- "wait": wait until the element is visible, for something the app does by itself (a timer \
running out); "value" is the most seconds to wait (a number up to 60; default 10).
Steps run in order; after each one the page settles (animations end, the DOM goes quiet). Use \
only elements the HTML really has or its scripts really create, and at most 60 steps.

Some tasks ask a question ("How many…?", "What is the total…?"), marked "asks_for_answer": true \
in the task list; the agent answers it in its final message. For such a task also give the answer \
you expect: "answer": {"expected": "<the answer>", "match": "<how to compare>", "tolerance": <number>}, \
where "match" is
- "number": the last number in the agent's answer must lie within "tolerance" of "expected" (the \
number alone, e.g. "1717.83"; tolerance e.g. 0.01 for money, 0 for a count);
- "normalized": the same text once case, spacing and surrounding punctuation are ignored (a name, a label);
- "regex": a Python regular expression that must match somewhere in the answer, case-insensitive \
(e.g. "\\\\beven\\\\b" in the JSON for \\beven\\b); it must not match an empty answer;
- "exact": the very text (a code, a time such as "15:00").
The expected answer must be what the app shows after your solution: we replay the solution on a \
fresh copy of the app and look for it in the page's visible text (the values inside form fields and \
hidden elements are not part of that text). Write the checker for the state the question needs (the \
step before reading the answer), or leave the checker out when the question needs no state change: \
then the answer alone judges the task, and the solution may be [] if the answer shows on the freshly \
loaded page.

Reply with a single JSON object and nothing else:
{"verdicts": [{"task_id": "<id>", "solvable": true, "reason": "<one or two sentences>", \
"checker": "<JS function body>", "solution": [{"action": "fill", "selector": "#amount", \
"value": "5"}, {"action": "click", "selector": "#convert"}]}]}
Use "rule": "<rule>" in place of "checker" if you wrote a rule, and add "answer" for a task that \
asks for one. For a task that is not solvable, set "solvable": false, explain why in "reason" and \
leave out the checker, the answer and the solution. Include every task id you were given, exactly once."""


def solution_schema() -> dict:
    """JSON Schema of a reference solution: the rules of `apps_prompts.SolutionStep`, as a schema."""
    step = {
        "type": "object",
        "required": ["action", "selector"],
        "additionalProperties": False,
        "properties": {
            "action": {"enum": list(SOLUTION_ACTIONS)},
            "selector": {"type": "string", "minLength": 1, "maxLength": MAX_SELECTOR_CHARS},
            "value": {"type": ["string", "number", "null"], "maxLength": MAX_VALUE_CHARS},
        },
        "if": {"properties": {"action": {"enum": list(VALUE_ACTIONS)}}, "required": ["action"]},
        "then": {
            "description": "fill, press and select steps need a 'value' (the text, the key, the option)",
            "required": ["value"],
            "properties": {"value": {"type": ["string", "number"]}},
        },
    }
    return {
        "description": f"a solvable task needs a 'solution': 1 to {MAX_SOLUTION_STEPS} steps {{action, selector, value?}}",
        "type": "array",
        "minItems": 1,
        "maxItems": MAX_SOLUTION_STEPS,
        "items": step,
    }


def answer_schema() -> dict:
    """JSON Schema of an answer check as the verifier sends it (the rules of `apps_prompts.AnswerCheck`)."""
    return {
        "description": "an 'answer' is {\"expected\": text or number, \"match\": one of "
                       f"{', '.join(ANSWER_MATCHES)}, \"tolerance\": a number ≥ 0 (for match number)}}",
        "type": "object",
        "required": ["expected"],
        "additionalProperties": False,
        "properties": {
            "expected": {"type": ["string", "number"], "minLength": 1, "maxLength": MAX_EXPECTED_CHARS},
            "match": {"enum": list(ANSWER_MATCHES)},
            "tolerance": {"type": "number", "minimum": 0},
        },
    }


def verdict_reply_schema(*, solutions: bool = True) -> dict:
    """JSON Schema of the verifier's reply (draft 2020-12).

    A solvable entry needs a checker (or rule) with a solution, or an answer (a question-style task
    judged by its answer alone; its solution may be empty). With `solutions=False`, the shape
    without the solution and the answer's details: what a reply must match to be usable at all (the
    parser checks each entry's solution and answer on its own, so one bad solution or answer costs
    its task a proof, not the batch).
    """
    has_checker = [
        {"required": ["checker"], "properties": {"checker": {"type": "string", "minLength": 1}}},
        {"required": ["rule"], "properties": {"rule": {"type": "string", "minLength": 1}}},
    ]
    needs = [{
        "description": "a solvable task needs a non-empty 'checker' (a JS function body) or 'rule', "
                       "or an 'answer' for a task that asks a question",
        "anyOf": [*has_checker, {"required": ["answer"], "properties": {"answer": {"type": ["object", "string", "number"]}}}],
    }]
    if solutions:
        needs.append({"if": {"anyOf": has_checker}, "then": {"required": ["solution"], "properties": {"solution": solution_schema()}}})
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "required": ["verdicts"],
        "properties": {
            "verdicts": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["task_id", "solvable", "reason"],
                    "properties": {
                        "task_id": {"type": "string", "minLength": 1},
                        "solvable": {"type": "boolean"},
                        "reason": {"type": "string"},
                        "checker": {"type": ["string", "null"]},
                        "rule": {"type": ["string", "null"]},
                        "solution": solution_schema() if solutions else {},
                        "answer": answer_schema() if solutions else {},
                    },
                    "if": {"properties": {"solvable": {"const": True}}, "required": ["solvable"]},
                    "then": needs[0] if len(needs) == 1 else {"allOf": needs},
                },
            }
        },
    }


def render_request(spec: AppSpec, html: str, tasks: Sequence[Task], max_html_chars: int) -> str:
    """The user message: the app, its HTML and the tasks of this batch."""
    shown = html if len(html) <= max_html_chars else html[:max_html_chars]
    note = "" if shown is html else f" (cut to the first {max_html_chars} of {len(html)} characters)"
    task_list = [
        {"task_id": t.id, "description": t.description, "expected_outcome": t.expected_outcome}
        | ({"asks_for_answer": True} if t.answer_check is not None else {})
        for t in tasks
    ]
    return (
        f"App: {spec.title} (domain: {spec.domain.value})\n"
        f"What it was asked to be:\n{spec.prompt_text()}\n\n"
        f"Its HTML{note}:\n```html\n{shown}\n```\n\n"
        f"Tasks ({len(tasks)}):\n{json.dumps(task_list, indent=1, ensure_ascii=False)}\n\n"
        "Judge each task and reply with the JSON object described above."
    )


def render_format_repair(error: Exception | str) -> str:
    """Asking again after a reply that was not valid JSON or broke the schema."""
    return (
        f"Your reply could not be used: {error}\n"
        "Send the whole answer again as one JSON object of the form "
        '{"verdicts": [{"task_id": ..., "solvable": ..., "reason": ..., "checker" or "rule": ..., "solution": [...], '
        '"answer": {...} (for a question)}]}, '
        "with no text before or after it."
    )


def render_repair(failures: Mapping[str, RepairItem]) -> str:
    """Asking for new checkers and solutions after some failed the gate or their proof (task id → what happened)."""
    lines = [
        "Each checker was run on a freshly loaded copy of the app, then your solution was replayed on "
        "it and the checker run again. These tasks did not pass:",
    ]
    for task_id, item in failures.items():
        lines.append(f"- task {task_id}: {item.what_happened}")
        lines += [f"  warning: {warning}" for warning in item.static_warnings]
        lines.append(f"  checker was: {item.checker[:1500]}" if item.checker else "  no checker was given")
        if item.solution:
            lines.append(f"  solution was: {item.solution[:1500]}")
        if item.answer:
            lines.append(f"  answer was: {item.answer[:600]}")
    lines.append(
        "Reply with one JSON object in the same format, covering only these task ids: for each, a "
        "corrected checker (false on the loaded page, reading the DOM only) with a solution that makes "
        "it true, and for a question a corrected answer the page shows after that solution, or "
        "solvable: false with the reason."
    )
    return "\n".join(lines)


class RepairItem(BaseModel):
    """One task in a repair message: what was tried and what happened to it."""

    checker: str = Field(default="", description="The checker as sent, or '' when none was (an answer-only task).")
    solution: str = Field(default="", description="The solution as the model sent it (JSON), or ''.")
    answer: str = Field(default="", description="The answer check as the model sent it (JSON), or ''.")
    what_happened: str
    static_warnings: list[str] = Field(default_factory=list)
