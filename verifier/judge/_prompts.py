"""What the model judge is told, in its two modes, and the shape of its answer.

The paper's VLM-as-judge (its Table 6) is shown the task, the expected outcome and the last
screenshot and says whether the task was completed; `screenshot` mode is that. `flow` mode shows
the trajectory's 1920×1080 dashboard instead — every step, drawn without the checker's verdict
(`dashboard_render.render_trajectory(..., hide_verdict=True)`), so the judge decides for itself.

Both ask for `{success, reason, confidence}` with confidence as the judge's own probability of
being right: an honest 0.5 when the image cannot settle it is worth more than a confident guess.
Everything here is hashed into `prompt_sha256(mode)` (recorded in every judgement and cached on),
so a changed word is a new prompt.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from cua import Viewport
from llm import Message, system_message, user_message

from ._records import JudgeMode

PROMPT_VERSION = "judge-1"
MODES: tuple[JudgeMode, ...] = ("screenshot", "flow")

VERDICT_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "Judge verdict",
    "type": "object",
    "properties": {
        "success": {"type": "boolean", "description": "The task was completed: the app shows the expected outcome."},
        "reason": {"type": "string", "description": "What was seen that decided it, in one or two sentences."},
        "confidence": {"type": "number", "minimum": 0, "maximum": 1,
                       "description": "The judge's probability that its decision is right (0.5: cannot tell)."},
    },
    "required": ["success", "reason", "confidence"],
    "additionalProperties": False,
}

_ROLE = (
    "You judge the work of a computer-use agent. The agent was given a task in a web app and tried to do it "
    "by clicking, typing and scrolling. Decide whether the task was completed, from what you can see."
)

_SHOWN = {
    "screenshot": (
        "You are shown the task the agent was given, the expected outcome (what the app shows once the task is "
        "done), and one screenshot of the app ({width}×{height} pixels) taken when the agent's attempt ended."
    ),
    "flow": (
        "You are shown the task the agent was given, the expected outcome (what the app shows once the task is "
        "done), and one dashboard image (1920×1080) of the whole attempt. Its header repeats the task and the "
        "expected outcome. The tiles below follow the attempt in order: START is the app as loaded "
        "({width}×{height} pixels), then one tile per step (#1, #2, …), each a crop of the screen after that step "
        "around where it acted, with a magenta marker of the action (ring + number = click, arrow = drag or "
        "scroll, ⌨ = typed text, 'keys:' = hotkey) and a caption giving the action and the start of the agent's "
        "thought. Amber tiles changed nothing on the page; red marks an error. The dashboard does not say whether "
        "the task succeeded: that is for you to decide."
    ),
}

_HOW = {
    "screenshot": (
        "- Judge the state the screenshot shows, not what the agent meant to do: the task is completed only if "
        "the app shows what the expected outcome describes (the values, texts, selections or screens it names)."
    ),
    "flow": (
        "- Follow the steps in order: did the agent do what the task needs, and does the app's state at the end "
        "show what the expected outcome describes (the values, texts, selections or screens it names)? The last "
        "tiles show the final state, but only around where the agent acted; judge what they and the earlier "
        "tiles show, not what the agent meant to do."
    ),
}

_RULES = (
    "- Values must be the ones the expected outcome asks for (numbers equal, allowing for formatting such as "
    "thousands separators or trailing zeros).\n"
    "- Text that is there for another reason (a default value, an example, a label, a placeholder, the wrong "
    "field) is not evidence that the task was done.\n"
    "- The agent's own words (its thoughts, a 'finished' step) are claims, not evidence; only the app counts.\n"
    "- If part of the expected outcome cannot be seen (off screen, hidden, covered, too small to read), you "
    "cannot confirm it: say so in the reason and lower your confidence. Answer success true only if what you "
    "can see makes completion more likely than not.\n"
    "\n"
    "confidence is your probability, from 0 to 1, that your decision is right: 0.5 means you cannot tell either "
    "way; use values near 1 only when the image shows the deciding evidence plainly. Do not round towards "
    "certainty.\n"
    "\n"
    "Answer with one JSON object and nothing else, with exactly these keys:\n"
    '{{"success": true or false, "reason": "one or two sentences naming what you saw that decided it", '
    '"confidence": a number from 0 to 1}}\n'
    "JSON Schema: {schema}"
)

_USER = "Task: {task}\nExpected outcome: {expected}\n\n{image}\n\nReply with the JSON object only."
_IMAGE = {
    "screenshot": "The image: the app when the attempt ended.",
    "flow": "The image: the dashboard of the attempt.",
}
_NO_OUTCOME = "(not given: judge whether the task as written was done)"

REPAIR = (
    "That reply cannot be used: {problem}\n"
    "Answer again with the JSON object only — exactly the keys success (true or false), reason (a string) and "
    "confidence (a number from 0 to 1) — keeping your judgement of the image."
)


def system_prompt(mode: JudgeMode, viewport: Viewport) -> str:
    """The system prompt of `mode` for a rollout in `viewport`.

    Raises:
        KeyError: `mode` is not 'screenshot' or 'flow'.
    """
    rules = _RULES.format(schema=json.dumps(VERDICT_SCHEMA, ensure_ascii=False, separators=(",", ":")))
    shown = _SHOWN[mode].format(width=viewport.width, height=viewport.height)
    return f"{_ROLE}\n\n{shown}\n\nHow to judge:\n{_HOW[mode]}\n{rules}"


def user_text(mode: JudgeMode, task: str, expected_outcome: str) -> str:
    """The user message's text (the image goes with it)."""
    expected = " ".join(expected_outcome.split()) or _NO_OUTCOME
    return _USER.format(task=" ".join(task.split()), expected=expected, image=_IMAGE[mode])


def build_messages(mode: JudgeMode, viewport: Viewport, task: str, expected_outcome: str, image: bytes) -> list[Message]:
    """The chat messages asking for a verdict: the system prompt, then the task, outcome and image."""
    return [system_message(system_prompt(mode, viewport)),
            user_message(user_text(mode, task, expected_outcome), images=[image])]


def prompt_sha256(mode: JudgeMode) -> str:
    """sha256 of everything that words `mode`'s request: version, templates, schema.

    Raises:
        KeyError: `mode` is not 'screenshot' or 'flow'.
    """
    material = {"version": PROMPT_VERSION, "mode": mode, "role": _ROLE, "shown": _SHOWN[mode], "how": _HOW[mode],
                "rules": _RULES, "user": _USER, "image": _IMAGE[mode], "no_outcome": _NO_OUTCOME,
                "repair": REPAIR, "schema": VERDICT_SCHEMA}
    return hashlib.sha256(json.dumps(material, sort_keys=True, ensure_ascii=False).encode("utf-8")).hexdigest()
