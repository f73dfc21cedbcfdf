"""The VLM commenter: app screenshot + dashboard (+ task) → validated feedback JSON (design.md §7).

What the model sees is chosen by a named mode, so ablations are one argument:

- `dashboard` (default): the app as it is now, and the trajectory's dashboard.
- `text-only`: the app as it is now, and the action/thought history as text.
- `screenshots-only`: the app as it is now, and every raw step screenshot in order.

A reply that is not valid JSON or breaks the schema gets a bounded repair round-trip: the
errors and the reply go back as text only (the images are what is expensive, and a repair is
about form, not about seeing the app again).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from cua import Trajectory, Viewport
from llm import (JsonReplyError, ModelCallError, ModelClient, Registry, Repair, RoleClient, ask_json, parse_json_reply,
                 system_message, user_message)

from ._feedback import COMMENT_SCHEMA, PRINCIPLE_DESCRIPTIONS, CommentValidationError, TaskComment, validate_comment
from dashboard_render import DASHBOARD_FILE, render_trajectory

PROMPT_VERSION = "commenter-v1"
DEFAULT_ROLE = "commenter"
MAX_REPAIRS = 1


@dataclass
class CommentInputs:
    """Everything a mode may show the model about one trajectory (images load lazily)."""

    trajectory: Trajectory
    folder: Path
    app_screenshot_png: bytes | None = None
    dashboard_png: bytes | None = None

    @cached_property
    def app_screenshot(self) -> bytes:
        """The current app: given, else the trajectory's initial screenshot (the same app version, as loaded)."""
        if self.app_screenshot_png is not None:
            return self.app_screenshot_png
        name = self.trajectory.initial_screenshot
        if not name or not (self.folder / name).is_file():
            raise FileNotFoundError(f"{self.folder}: no initial screenshot; pass app_screenshot=... explicitly")
        return (self.folder / name).read_bytes()

    @cached_property
    def dashboard(self) -> bytes:
        if self.dashboard_png is not None:
            return self.dashboard_png
        if (self.folder / DASHBOARD_FILE).is_file():
            return (self.folder / DASHBOARD_FILE).read_bytes()
        return render_trajectory(self.trajectory, self.folder).png

    def step_screenshots(self) -> list[bytes]:
        return [
            (self.folder / step.screenshot).read_bytes()
            for step in self.trajectory.steps
            if step.screenshot and (self.folder / step.screenshot).is_file()
        ]


ModeBuilder = Callable[[CommentInputs], tuple[str, list[bytes]]]
COMMENT_MODES: Registry[ModeBuilder] = Registry("commenter mode")


@COMMENT_MODES.register("dashboard")
def _dashboard_mode(inputs: CommentInputs) -> tuple[str, list[bytes]]:
    text = (
        f"Image 1: the app as it is now ({_size(inputs)}).\n"
        "Image 2: the dashboard of the agent's attempt (1920×1080). Its header gives the task, the result and "
        "why the attempt ended; the tiles follow the steps in order (START, #1, #2, …). Each tile is a crop "
        "around where that step acted, with a magenta marker (ring + step number = click, arrow = drag or "
        "scroll, ⌨ = typed text, 'keys:' = hotkey); the caption gives the action and the start of the agent's "
        "thought. Amber tiles changed nothing in the DOM; red marks errors and the final failure."
    )
    return text, [inputs.app_screenshot, inputs.dashboard]


@COMMENT_MODES.register("text-only")
def _text_mode(inputs: CommentInputs) -> tuple[str, list[bytes]]:
    lines = [f"Image 1: the app as it is now ({_size(inputs)}).", "The agent's steps, in order:"]
    for step in inputs.trajectory.steps:
        action = step.screen_action.describe() if step.screen_action else "no action"
        notes = []
        if step.target is not None:
            notes.append(f"on <{step.target.tag}{'#' + step.target.id if step.target.id else ''}> \"{step.target.text[:40]}\"")
        if step.dom_changed is False:
            notes.append("no DOM change")
        if step.error:
            notes.append(f"error: {step.error[:120]}")
        thought = " ".join(step.thought.split())[:300]
        lines.append(f"#{step.index} {action} {'(' + '; '.join(notes) + ')' if notes else ''} — thought: {thought or '(none)'}")
    return "\n".join(lines), [inputs.app_screenshot]


@COMMENT_MODES.register("screenshots-only")
def _screenshots_mode(inputs: CommentInputs) -> tuple[str, list[bytes]]:
    shots = inputs.step_screenshots()
    text = (
        f"Image 1: the app as it is now ({_size(inputs)}).\n"
        f"Images 2–{len(shots) + 1}: the screen after each of the agent's {len(shots)} steps, in order."
    )
    return text, [inputs.app_screenshot] + shots


def _size(inputs: CommentInputs) -> str:
    viewport = inputs.trajectory.viewport
    return f"{viewport.width}×{viewport.height}"


def _system_prompt(viewport: Viewport) -> str:
    principles = "\n".join(f"- {name}: {text}" for name, text in PRINCIPLE_DESCRIPTIONS.items())
    return (
        "You review a web app for computer-use agents. An agent tried a task on the app and failed. "
        "Find why, and say how to change the app's HTML/CSS/JS so that an agent succeeds next time.\n"
        f"The four agent-centric design principles:\n{principles}\n"
        "Answer with one JSON object and nothing else, with exactly these keys:\n"
        '- "issues": at most 3 short statements of what went wrong;\n'
        '- "actionable_changes": 3 to 6 statements, each naming the element by a CSS selector or id (e.g. `#save`, '
        "`input[type=range]`) and ending with the principle it restores, e.g. \"… — interaction robustness\";\n"
        f'- "fit_within_screen": true if the revision must bring the task\'s controls inside the {viewport.width}×{viewport.height} viewport;\n'
        '- "avoid_regressions": true if parts of the app already work for the agent and must be kept.\n'
        f"JSON Schema: {json.dumps(COMMENT_SCHEMA, ensure_ascii=False)}"
    )


def _task_text(trajectory: Trajectory) -> str:
    result = "succeeded" if trajectory.success else "failed"
    reason = trajectory.termination.value if trajectory.termination else "incomplete"
    return (
        f"Task: {trajectory.task}\n"
        f"Expected outcome: {trajectory.expected_outcome or '(not given)'}\n"
        f"Result: the agent {result} after {len(trajectory.steps)} steps (ended: {reason})."
    )


def build_messages(inputs: CommentInputs, mode: str = "dashboard") -> list[dict]:
    """The chat messages for `mode`; raises UnknownNameError (listing the modes) for an unknown one."""
    text, images = COMMENT_MODES.get(mode)(inputs)
    content = f"{_task_text(inputs.trajectory)}\n\n{text}\n\nReply with the JSON object only."
    return [system_message(_system_prompt(inputs.trajectory.viewport)), user_message(content, images=images)]


def parse_reply(text: str) -> dict:
    """The JSON object in a model reply (code fences and surrounding prose tolerated; never eval).

    Raises CommentValidationError when there is no JSON object or it is not valid JSON.
    """
    # NaN and Infinity are read as numbers, as this reading always has, and left to `validate_comment`:
    # refusing them here would change what the repair request says about such a reply.
    try:
        return parse_json_reply(text, allow_nan=True)
    except JsonReplyError as error:
        if error.problem == "no_json":
            raise CommentValidationError(["the reply contains no JSON object"]) from error
        raise CommentValidationError([f"the reply is not valid JSON: {error.parse_error}"]) from error


def _repair_text(error: CommentValidationError) -> str:
    listing = "\n".join(f"- {p}" for p in error.problems)
    return (f"That reply does not meet the contract:\n{listing}\n"
            "Return the corrected JSON object only, keeping the content of your answer.")


REPAIR = Repair(_repair_text, resend="system")
"""The errors and the reply go back as text only (the module's docstring says why)."""


class ModelCommenter:
    """Comments through a VLM named by registry role or model name (default: the `commenter` role)."""

    offline = False

    def __init__(self, client: ModelClient, model: str = DEFAULT_ROLE, mode: str = "dashboard", max_repairs: int = MAX_REPAIRS, **params):
        COMMENT_MODES.get(mode)  # fail early, listing the known modes
        self.client = RoleClient(client, model)  # fails now, listing the known names, rather than at the first call
        self.model = model
        self.mode = mode
        self.max_repairs = max(0, max_repairs)
        self.params = params

    async def comment(
        self,
        trajectory_dir: Path | str,
        *,
        app_screenshot: bytes | None = None,
        dashboard_png: bytes | None = None,
        html: str | bytes | None = None,  # unused: the model sees the app through its screenshot
    ) -> TaskComment:
        """Comment on one trajectory. Model failures are recorded in the result, not raised."""
        folder = Path(trajectory_dir)
        trajectory = Trajectory.load(folder)
        inputs = CommentInputs(trajectory, folder, app_screenshot, dashboard_png)
        result = TaskComment(
            app_id=trajectory.app_id, task_id=trajectory.task_id, task=trajectory.task,
            commenter="model", model=self.model, mode=self.mode, attempts=0,
        )
        try:
            messages = build_messages(inputs, self.mode)
        except FileNotFoundError as exc:  # a trajectory cut short before its first screenshot: nothing to show
            result.error = f"nothing to comment on: {exc}"
            return result
        answer = await ask_json(self.client, messages, parse=lambda text: validate_comment(parse_reply(text)),
                                repair=REPAIR, attempts=1 + self.max_repairs, params=self.params, invalid=CommentValidationError,
                                call_errors=(ModelCallError,))
        result.attempts = len(answer.attempts)
        result.raw_replies = [attempt.reply for attempt in answer.attempts]
        result.comment = answer.value
        if answer.call_error is not None:
            result.error = answer.error
        elif not answer.ok:
            result.error = f"invalid reply: {answer.attempts[-1].error}"
        return result
