"""What the model detector is told, and the shape of its answer.

GTArena's detector task: given one transition — the screen before an action, the action, the
screen after — say whether the GUI shows a defect and of which type. The reply is
`{defect, type, evidence}`, `type` one of the taxonomy (`cua.DEFECT_TAXONOMY`) or null. Everything
here, and the taxonomy's definitions the model is told, is hashed into `prompt_sha256()` (recorded
with every detection), so a changed word is a new prompt.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from cua import DEFECT_TAXONOMY, DEFECT_TYPES, TransitionTuple
from llm import Message, system_message, user_message

PROMPT_VERSION = "detector-1"

DEFINITIONS: dict[str, str] = {defect.name: defect.definition for defect in DEFECT_TAXONOMY}
"""One line per defect type, as the model is told: the taxonomy's definitions (`cua.DEFECT_TAXONOMY`), in its order."""

DETECTION_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "GUI defect detection for one transition",
    "type": "object",
    "properties": {
        "defect": {"type": "boolean", "description": "The transition shows a GUI defect."},
        "type": {"enum": [*DEFECT_TYPES, None], "description": "The defect's type (null when there is none)."},
        "evidence": {"type": "string", "maxLength": 1000, "description": "What was seen that decided it."},
    },
    "required": ["defect", "type", "evidence"],
    "additionalProperties": False,
}

_SYSTEM = (
    "You test the graphical user interface of a web app for defects. You are shown one transition: a screenshot "
    "of the app ({width}×{height} pixels) before an action, the action (in screen pixels of that screenshot), and a "
    "screenshot after it. Decide whether this transition shows a GUI defect — in how the screen looks before or "
    "after (display defects), or in how the app answered the action (interaction defects) — and of which type.\n\n"
    "Defect types:\n{types}\n\n"
    "Most transitions have no defect: answer defect false unless the screenshots show one. When you answer defect "
    "true, give the one type that fits best; when false, type is null.\n\n"
    "Answer with one JSON object and nothing else, with exactly these keys:\n"
    '{{"defect": true or false, "type": one of the types above or null, "evidence": "one or two sentences naming '
    'what you saw"}}\nJSON Schema: {schema}'
)
_USER = "{task}The action: {action}{element}.\nThe first image is the screen before the action, the second after it."
REPAIR = (
    "That reply cannot be used: {problem}\n"
    "Answer again with the JSON object only — exactly the keys defect (true or false), type (one of the listed types, "
    "or null) and evidence (a string) — keeping your judgement of the images."
)


def system_prompt(width: int, height: int) -> str:
    types = "\n".join(f"- {defect.name} ({defect.kind}): {defect.definition}" for defect in DEFECT_TAXONOMY)
    schema = json.dumps(DETECTION_SCHEMA, ensure_ascii=False, separators=(",", ":"))
    return _SYSTEM.format(width=width, height=height, types=types, schema=schema)


def user_text(item: TransitionTuple, task: str | None = None) -> str:
    element = ""
    if item.element is not None:
        name = item.element.text or item.element.id or item.element.tag
        element = f" on the {item.element.tag} element \"{name[:60]}\""
    task_line = f"The user's task: {' '.join(task.split())}\n" if task else ""
    return _USER.format(task=task_line, action=item.action_text, element=element)


def build_messages(item: TransitionTuple, before: bytes, after: bytes, task: str | None = None) -> list[Message]:
    """The chat messages asking about one tuple: the system prompt, then the action and both screenshots."""
    return [system_message(system_prompt(item.viewport_width, item.viewport_height)),
            user_message(user_text(item, task), images=[before, after])]


def prompt_sha256() -> str:
    """sha256 of everything that words the request: version, templates, definitions, schema."""
    body = json.dumps({"version": PROMPT_VERSION, "system": _SYSTEM, "user": _USER, "repair": REPAIR,
                       "definitions": DEFINITIONS, "schema": DETECTION_SCHEMA}, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(body.encode("utf-8")).hexdigest()
