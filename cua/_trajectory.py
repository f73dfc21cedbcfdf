"""The trajectory of one rollout: what the agent saw, thought and did, step by step.

Owned by `cua`; read by the dashboard renderer, the commenter and the report. On disk a
trajectory is a folder: `trajectory.json` plus PNG screenshots named in it (paths relative to
the folder). The JSON is rewritten atomically after every step, so a crash keeps the steps done.
"""

from __future__ import annotations

import os
import tempfile
from contextlib import suppress
from enum import Enum
from pathlib import Path

from pydantic import BaseModel, Field

from llm import first_problem

from ._actions import Action
from ._browser import BlockedRequest, DialogRecord
from ._viewport import DEFAULT_VIEWPORT, Viewport

TRAJECTORY_FILE = "trajectory.json"


CANCELLED = "cancelled"
"""The error of a rollout cancelled from outside (a stopped run): it did not end by itself."""


class TerminationReason(str, Enum):
    success = "success"  # the checker turned true
    finished = "finished"  # the agent said it was done, the checker is false
    max_steps = "max_steps"
    stuck = "stuck"  # no DOM change over k steps, or the same action repeated
    invalid = "invalid"  # too many replies that could not be used (did not parse, or pointed off the screen)
    error = "error"
    timeout = "timeout"


class Box(BaseModel):
    x: float
    y: float
    width: float
    height: float


class ElementInfo(BaseModel):
    """The element under the pointer (or focused, for keyboard actions) when the step acted."""

    tag: str
    id: str | None = None
    text: str = ""
    box: Box | None = None
    selector: str | None = Field(default=None, description="A CSS selector that finds it now.")
    injected: str | None = Field(
        default=None, description="The element (or an ancestor) was added by the run's serve-time transform: what it "
        "is (decoy, banner, popup, popup-close, text…; `cua.INJECTED_ATTRIBUTE`). None: the app's own.")


class StepTimings(BaseModel):
    model_ms: float = 0.0
    execute_ms: float = 0.0
    settle_ms: float = 0.0
    motion_ms: float = Field(
        default=0.0, description="Of settle_ms: until the last frame in which a scroll position or the target moved."
    )
    settle_waited_for: list[str] = Field(
        default_factory=list,
        description="What settling saw and waited out: dom, scroll, target, target animation, animation.",
    )
    settle_capped: bool = Field(default=False, description="Settling hit its cap: the page may still have been moving.")
    checker_ms: float = 0.0
    screenshot_ms: float = 0.0
    write_ms: float = 0.0
    total_ms: float = 0.0


class TokenUsage(BaseModel):
    prompt: int = 0
    completion: int = 0

    def __add__(self, other: TokenUsage) -> TokenUsage:
        return TokenUsage(prompt=self.prompt + other.prompt, completion=self.completion + other.completion)


class Step(BaseModel):
    index: int = Field(description="1-based step number; the initial state is step 0 (not stored as a Step).")
    at_s: float | None = Field(
        default=None, description="When the action was executed, in seconds since the app's context opened (the "
        "clock of `blocked_requests`); None in trajectories recorded before it was kept.")
    screenshot: str | None = Field(default=None, description="PNG after the action, relative to the folder.")
    model_action: Action | None = Field(default=None, description="As the model expressed it (its coordinate space).")
    screen_action: Action | None = Field(default=None, description="In viewport pixels, as executed.")
    raw_text: str = Field(default="", description="The model's reply, verbatim.")
    thought: str = ""
    target: ElementInfo | None = None
    dom_changed: bool | None = Field(default=None, description="DOM, form values, focus or scroll differ after the action.")
    screen_changed: bool | None = Field(default=None, description="The screenshot after differs from the one before.")
    checker_passed: bool = False
    checker_error: str | None = Field(default=None, description="Why the checker could not judge (it counts as false).")
    error: str | None = None
    invalid_replies: list[str] = Field(
        default_factory=list,
        description="Replies rejected (unparseable, or pointing off the screen) before the one this step acted on; "
        "`notes` says why each was.",
    )
    notes: list[str] = Field(
        default_factory=list, description="Harness notes, e.g. acknowledged safety checks, a point clamped onto the screen."
    )
    timings: StepTimings = Field(default_factory=StepTimings)
    tokens: TokenUsage = Field(default_factory=TokenUsage)


class Trajectory(BaseModel):
    app_id: str
    task_id: str
    task: str = Field(description="The task text the agent was given.")
    expected_outcome: str = ""
    policy: str = Field(description="Registry name of the policy, e.g. 'heuristic' (offline) or 'uitars'.")
    model: str | None = Field(default=None, description="Model name, None for offline policies.")
    offline: bool = False
    viewport_width: int = DEFAULT_VIEWPORT.width
    viewport_height: int = DEFAULT_VIEWPORT.height
    coordinate_space: str = "screen"
    policy_settings: dict = Field(default_factory=dict, description="The policy's own settings, e.g. the UI-TARS prompt and history length.")
    chromium: str | None = Field(
        default=None, description="The Chromium binary the rollout ran in (`BrowserConfig.executable_path`: the headless "
        "shell by default for headless runs); None in trajectories recorded before this was kept.")
    chromium_version: str | None = Field(default=None, description="That browser's version, as it reported it.")
    in_page_select_picker: bool | None = Field(
        default=None,
        description="Whether <select> drop-downs were drawn inside the page while open (BrowserConfig.in_page_select_picker); "
        "None in trajectories recorded before this was kept.",
    )
    seed: int | None = Field(
        default=None, description="The seed of the app's `Math.random` (`rollout(seed=…)`); None: unseeded."
    )
    fixed_clock: bool = Field(
        default=False, description="The app's clock started at `cua.FIXED_CLOCK_START` (then ran in real time).",
    )
    short_timers_ms: int = Field(
        default=0, description="Each observation waited for the app's pending timers of at most this many ms "
        "(`BrowserConfig.short_timers_ms`); 0: it did not.")
    still_animations: bool = Field(
        default=False, description="Infinite animations were stopped as they started (`BrowserConfig.still_animations`).")
    transform: str | None = Field(
        default=None, description="The serve-time change the app was shown with (a variation such as 'dark+long', or "
        "an injected defect; `BrowserConfig.transform`); None: the app as it is.")
    transform_sha256: str | None = Field(default=None, description="Content address of that transform.")
    stop_on_checker: bool = Field(
        default=True, description="Whether the checker passing ended the episode (`RolloutConfig.stop_on_checker`); "
        "when not, the episode went on to the agent's `finished` (its answer) or a limit.",
    )
    initial_screenshot: str | None = None
    steps: list[Step] = Field(default_factory=list)
    termination: TerminationReason | None = Field(default=None, description="None while running (or if it crashed).")
    success: bool = Field(default=False, description="The checker turned true (at any step when `stop_on_checker` is off).")
    blocked_requests: list[BlockedRequest] = Field(default_factory=list)
    dialogs: list[DialogRecord] = Field(default_factory=list)
    popups_closed: int = 0
    downloads_refused: int = 0
    page_errors: list[str] = Field(default_factory=list)
    max_steps: int | None = None
    html_sha256: str | None = Field(default=None, description="Content address of the app version the agent used.")
    error: str | None = None
    duration_s: float = 0.0
    trace: str | None = Field(default=None, description="Playwright trace.zip, relative to the folder.")
    final_text: str | None = Field(
        default=None,
        description="The final page's visible text (`document.body.innerText`, read in the harness's isolated world "
        "once the episode ended), cut at `RolloutConfig.final_text_max_chars`; None in trajectories recorded before "
        "it was kept, or when the page could not be read (`final_text_error`).",
    )
    final_text_truncated: bool = Field(default=False, description="`final_text` was cut at its cap.")
    final_text_error: str | None = Field(default=None, description="Why the final page's text could not be read.")

    @property
    def viewport(self) -> Viewport:
        """The viewport the rollout ran in (its screenshots' size)."""
        return Viewport(width=self.viewport_width, height=self.viewport_height)

    @property
    def finished(self) -> bool:
        return self.termination is not None

    @property
    def checker_ever_passed(self) -> bool:
        """The checker passed after some step (`Step.checker_passed`), whether or not that ended the episode."""
        return any(step.checker_passed for step in self.steps)

    @property
    def answer(self) -> str | None:
        """The agent's final answer: the text of its `finished` action (UI-TARS's `finished(content=…)`,
        OpenAI computer-use's final message), or None when it gave none."""
        for step in reversed(self.steps):
            action = step.screen_action or step.model_action
            if action is not None and action.kind == "finished":
                return action.text if action.text and action.text.strip() else None
        return None

    @property
    def cancelled(self) -> bool:
        """Cut short from outside (a stopped run): kept for the record, but not an attempt that ended."""
        return self.termination == TerminationReason.error and self.error == CANCELLED

    def save(self, folder: Path) -> Path:
        """Write `trajectory.json` atomically (temp file + rename) into `folder`."""
        folder.mkdir(parents=True, exist_ok=True)
        return write_atomic(folder / TRAJECTORY_FILE, self.model_dump_json(indent=1).encode("utf-8"))

    @classmethod
    def load(cls, folder: Path) -> "Trajectory":
        """Read a trajectory folder; raises FileNotFoundError / ValueError naming the file."""
        path = Path(folder) / TRAJECTORY_FILE
        if not path.is_file():
            raise FileNotFoundError(f"no {TRAJECTORY_FILE} in '{folder}'")
        try:
            return cls.model_validate_json(path.read_bytes())
        except ValueError as exc:
            raise ValueError(f"{path}: not a valid trajectory: {first_problem(exc)}") from exc


def write_atomic(path: Path, data: bytes) -> Path:
    """Write bytes so that a reader sees the old file or the whole new one, never half."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        with suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    return path
