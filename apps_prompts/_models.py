"""The app and task specs every other stage reads (design.md §3)."""

from __future__ import annotations

import re
from enum import Enum
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

ID_PATTERN = r"^[a-z0-9][a-z0-9_-]*$"


class Domain(str, Enum):
    """The six AUI-Gym domains."""

    app = "app"
    landing = "landing"
    game = "game"
    interactive = "interactive"
    tool = "tool"
    utility = "utility"


class TaskCategory(str, Enum):
    core_function = "core_function"
    user_workflow = "user_workflow"
    edge_case = "edge_case"


class AppPrompt(BaseModel):
    """A structured app prompt in the AUI-Gym style."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(description="The app's name as the user would see it.")
    goal: str = Field(description="What the app is for, in one or two sentences.")
    features: list[str] = Field(default_factory=list, description="Features the app must offer.")
    theme: str = Field(default="", description="Visual theme and tone.")

    def render(self) -> str:
        """The prompt as the text a coder model reads."""
        lines = [f"Name: {self.name}", f"Goal: {self.goal}"]
        if self.features:
            lines.append("Features:")
            lines += [f"- {feature}" for feature in self.features]
        if self.theme:
            lines.append(f"Theme: {self.theme}")
        return "\n".join(lines)


MAX_WAIT_S = 60.0  # a solution may wait out an app's timer (a 20 s game round), never forever


class SolutionStep(BaseModel):
    """One selector-level step of a reference solution, replayed to prove a task solvable.

    These are for validating specs only; agents never see them and never act through selectors.
    """

    model_config = ConfigDict(extra="forbid")

    action: Literal["click", "fill", "press", "select", "check", "hover", "dblclick", "wait"]
    selector: str
    value: str | None = Field(
        default=None,
        description="Text for fill, key for press, option for select; for wait, the most seconds to wait (≤ 60).",
    )

    @model_validator(mode="after")
    def _value_needed(self) -> "SolutionStep":
        if self.action in ("fill", "press", "select") and self.value is None:
            raise ValueError(f"step '{self.action} {self.selector}' needs a value")
        if self.action == "wait" and self.value is not None:
            try:
                seconds = float(self.value)
            except ValueError:
                seconds = -1.0
            if not 0 < seconds <= MAX_WAIT_S:
                raise ValueError(f"step 'wait {self.selector}' value {self.value!r} must be seconds in (0, {MAX_WAIT_S:g}]")
        return self


class Level(str, Enum):
    """OSUniverse's difficulty levels, easiest first; each has a weight and a step budget (`flows.LevelSettings`)."""

    paper = "paper"
    wood = "wood"
    bronze = "bronze"
    silver = "silver"
    gold = "gold"


LEVELS = [level.value for level in Level]
LEGACY_LEVELS = {"easy": Level.wood, "medium": Level.bronze, "hard": Level.silver}
"""How task files written before the five levels read: easy → wood, medium → bronze, hard → silver."""


class DomCheck(BaseModel):
    """The page's state: a checker (JS body or rule) run after every step; success ends the rollout."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["dom"] = "dom"
    checker: str = Field(min_length=1)


AnswerMatch = Literal["exact", "normalized", "regex", "number"]


class AnswerCheck(BaseModel):
    """The agent's final answer (`finished(content=…)`, or computer-use's final message) against an expected value.

    exact: the same text; normalized: the same once case, spaces and surrounding punctuation are
    ignored; regex: the pattern matches somewhere in the answer (case-insensitive); number: a number
    in the answer lies within `tolerance` of the expected one.
    """

    model_config = ConfigDict(extra="forbid")

    kind: Literal["answer"] = "answer"
    expected: str = Field(min_length=1, description="The expected answer (a pattern for regex, a number for number).")
    match: AnswerMatch = "normalized"
    tolerance: float = Field(default=0.0, ge=0, description="For number: the largest accepted difference.")

    @model_validator(mode="after")
    def _expected_fits_match(self) -> "AnswerCheck":
        if self.match == "regex":
            try:
                re.compile(self.expected)
            except re.error as error:
                raise ValueError(f"expected {self.expected!r} is not a valid regex: {error}") from None
        if self.match == "number":
            try:
                value = float(self.expected.replace(",", ""))
            except ValueError:
                raise ValueError(f"expected {self.expected!r} is not a number (match: number)") from None
            if value != value or value in (float("inf"), float("-inf")):
                raise ValueError(f"expected {self.expected!r} must be a finite number")
        return self


class JudgeCheck(BaseModel):
    """A model judge's verdict on the trajectory against the task's expected outcome: the final screenshot,
    or the whole flow (its dashboard drawn without the checker's verdict)."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["final_screenshot", "flow"]


Check = Annotated[DomCheck | AnswerCheck | JudgeCheck, Field(discriminator="kind")]


class Task(BaseModel):
    """A task a user would try on an app, with a stable id (never a list position).

    A task passes when every one of its checks passes (OSUniverse's rule): the DOM checker
    (`checker`) and the further `checks` (an answer, a model judge's verdict).
    """

    model_config = ConfigDict(extra="forbid")

    id: str = Field(pattern=ID_PATTERN, description="Stable task id, unique within its app.")
    description: str = Field(min_length=1, description="What the user wants done, in their words.")
    category: TaskCategory = TaskCategory.core_function
    expected_outcome: str = Field(min_length=1, description="The terminal state that means success.")
    level: Level | None = Field(default=None, description="Difficulty: paper, wood, bronze, silver or gold "
                                "(easy/medium/hard of older files read as wood/bronze/silver).")
    level_rationale: str | None = Field(default=None, description="Why this level, in one line.")
    checker: str | None = Field(
        default=None,
        description="Reference checker: a JS function body reading the DOM and returning a boolean.",
    )
    checks: list[Check] = Field(default_factory=list, description=(
        "Further checks that must pass too: an answer, or a model judge (final_screenshot / flow). A `dom` check "
        "here is the same as `checker`."))
    solution: list[SolutionStep] = Field(
        default_factory=list, description="Reference selector-level steps that make the checker true."
    )

    @field_validator("level", mode="before")
    @classmethod
    def _legacy_level(cls, value: object) -> object:
        return LEGACY_LEVELS.get(value, value) if isinstance(value, str) else value

    @model_validator(mode="after")
    def _one_dom_check(self) -> "Task":
        dom = [check for check in self.checks if isinstance(check, DomCheck)]
        if len(dom) + (self.checker is not None) > 1:
            raise ValueError("a task has one DOM checker: combine the conditions in one (with && or AND)")
        if dom:  # `checks: [{kind: dom, …}]` is the same as `checker:`
            self.checker = dom[0].checker
            self.checks = [check for check in self.checks if not isinstance(check, DomCheck)]
        kinds = [check.kind for check in self.checks]
        duplicated = sorted({kind for kind in kinds if kinds.count(kind) > 1})
        if duplicated:
            raise ValueError(f"more than one '{duplicated[0]}' check: a task has at most one of each kind")
        return self

    @property
    def answer_check(self) -> AnswerCheck | None:
        return next((check for check in self.checks if isinstance(check, AnswerCheck)), None)

    @property
    def judge_checks(self) -> list[JudgeCheck]:
        return [check for check in self.checks if isinstance(check, JudgeCheck)]


class AppSpec(BaseModel):
    """An app to generate, judge and redesign."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(pattern=ID_PATTERN)
    title: str = Field(min_length=1)
    domain: Domain
    prompt: AppPrompt | str = Field(
        description="Structured prompt (ours) or free text (imported AUI-Gym prompts)."
    )
    reference_html: str | None = Field(
        default=None, description="Path of the reference single-file HTML app, relative to the spec file."
    )
    tasks: list[Task] = Field(default_factory=list)
    source: str | None = Field(default=None, description="Where the spec was loaded from (set by the loader).")

    @field_validator("tasks")
    @classmethod
    def _unique_task_ids(cls, tasks: list[Task]) -> list[Task]:
        seen: set[str] = set()
        for task in tasks:
            if task.id in seen:
                raise ValueError(f"duplicate task id '{task.id}'")
            seen.add(task.id)
        return tasks

    def prompt_text(self) -> str:
        return self.prompt.render() if isinstance(self.prompt, AppPrompt) else self.prompt

    def task(self, task_id: str) -> Task:
        task = next((task for task in self.tasks if task.id == task_id), None)
        if task is None:
            known = ", ".join(t.id for t in self.tasks) or "none"
            raise KeyError(f"app '{self.id}' has no task '{task_id}' (known: {known})")
        return task
