"""What the verifier model is told, and the JSON shape its reply must have.

The prompt is ours, written from the paper's intent: reason over the elements and states a
task needs, prefer stable ids, and encode the task's end state rather than a step towards it.
Bump PROMPT_VERSION whenever the wording or the schema changes (it is recorded in verdicts).
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from apps_prompts import AppSpec, Task

PROMPT_VERSION = "verifier-2"

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

Reply with a single JSON object and nothing else:
{"verdicts": [{"task_id": "<id>", "solvable": true, "reason": "<one or two sentences>", \
"checker": "<JS function body>"}]}
Use "rule": "<rule>" in place of "checker" if you wrote a rule. For a task that is not \
solvable, set "solvable": false, explain why in "reason" and leave out the checker. Include \
every task id you were given, exactly once."""


def verdict_reply_schema() -> dict:
    """JSON Schema of the verifier's reply (draft 2020-12)."""
    checker_needed = {
        "description": "a solvable task needs a non-empty 'checker' (a JS function body) or 'rule'",
        "anyOf": [
            {"required": ["checker"], "properties": {"checker": {"type": "string", "minLength": 1}}},
            {"required": ["rule"], "properties": {"rule": {"type": "string", "minLength": 1}}},
        ],
    }
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
                    },
                    "if": {"properties": {"solvable": {"const": True}}, "required": ["solvable"]},
                    "then": checker_needed,
                },
            }
        },
    }


def render_request(spec: AppSpec, html: str, tasks: Sequence[Task], max_html_chars: int) -> str:
    """The user message: the app, its HTML and the tasks of this batch."""
    shown = html if len(html) <= max_html_chars else html[:max_html_chars]
    note = "" if shown is html else f" (cut to the first {max_html_chars} of {len(html)} characters)"
    task_list = [
        {"task_id": t.id, "description": t.description, "expected_outcome": t.expected_outcome} for t in tasks
    ]
    return (
        f"App: {spec.title} (domain: {spec.domain.value})\n"
        f"What it was asked to be:\n{spec.prompt_text()}\n\n"
        f"Its HTML{note}:\n```html\n{shown}\n```\n\n"
        f"Tasks ({len(tasks)}):\n{json.dumps(task_list, indent=1, ensure_ascii=False)}\n\n"
        "Judge each task and reply with the JSON object described above."
    )


def render_format_repair(error: str) -> str:
    """Asking again after a reply that was not valid JSON or broke the schema."""
    return (
        f"Your reply could not be used: {error}\n"
        "Send the whole answer again as one JSON object of the form "
        '{"verdicts": [{"task_id": ..., "solvable": ..., "reason": ..., "checker" or "rule": ...}]}, '
        "with no text before or after it."
    )


def render_gate_repair(failures: dict[str, tuple[str, str]]) -> str:
    """Asking for new checkers after some failed the validation gate: task id → (checker, reasons)."""
    lines = [
        "These checkers were run on the freshly loaded app and rejected by the validation gate:",
    ]
    for task_id, (checker, reasons) in failures.items():
        lines.append(f"- task {task_id}: {reasons}\n  checker was: {checker[:1500]}")
    lines.append(
        "Reply with one JSON object in the same format, covering only these task ids: a corrected "
        "checker for each (false on the loaded page, reading the DOM only), or solvable: false with the reason."
    )
    return "\n".join(lines)
