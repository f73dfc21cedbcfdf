"""The commenter's output contract, and the per-app merge that the coder consumes (design.md §7).

One failed task gives one `Comment` (JSON validated by `COMMENT_SCHEMA`); all comments of an
app are merged into one `Feedback`: statements deduplicated (same wording, or the same element
with the same principle), ranked by how many tasks raised them, and capped, so the coder reads
a short list instead of thirty near-copies.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from typing import Any

import jsonschema
from pydantic import BaseModel, ConfigDict, Field

from ._facts import OfflineFacts

PRINCIPLES = ("state visibility", "interaction robustness", "input permissiveness", "predictable behaviour")
"""The four agent-centric principles (design.md §7)."""

PRINCIPLE_DESCRIPTIONS = {
    "state visibility": "every state change shows in the DOM at once (no hidden or transient-only state)",
    "interaction robustness": "critical controls are visible and actionable within the viewport, large enough, with stable ids",
    "input permissiveness": "values can be entered directly (typed, clicked), not only by precise drags",
    "predictable behaviour": "a neutral state on load; no animation, randomness or timing the agent must race",
}

_PRINCIPLE_PATTERN = r"(?i)(state visibility|interaction robustness|input permissiveness|predictable behaviou?r)"
# A selector or id: #id, .class, tag[attr], or anything in backticks.
_SELECTOR_PATTERN = re.compile(r"`[^`]+`|#[A-Za-z_][\w-]*|\.[A-Za-z_][\w-]*|\b[a-z][a-z0-9]*\[[^\]]+\]")

COMMENT_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "CUA commenter feedback for one task",
    "type": "object",
    "additionalProperties": False,
    "required": ["issues", "actionable_changes", "fit_within_screen", "avoid_regressions"],
    "properties": {
        "issues": {
            "type": "array",
            "maxItems": 3,
            "items": {"type": "string", "minLength": 3, "maxLength": 200},
            "description": "Why the agent failed, at most 3 short statements.",
        },
        "actionable_changes": {
            "type": "array",
            "minItems": 3,
            "maxItems": 6,
            "items": {"type": "string", "minLength": 10, "maxLength": 400, "pattern": _PRINCIPLE_PATTERN},
            "description": "Changes to the HTML, each naming a selector or id and the principle it restores.",
        },
        "fit_within_screen": {
            "type": "boolean",
            "description": "True if the revision must bring the task's controls inside the agent's viewport.",
        },
        "avoid_regressions": {
            "type": "boolean",
            "description": "True if parts of the app already work for the agent and must be kept (ids, functions, controls).",
        },
    },
}


class CommentValidationError(ValueError):
    """A commenter reply that does not meet the contract; `problems` lists every reason."""

    def __init__(self, problems: list[str]):
        self.problems = problems
        super().__init__("; ".join(problems))


class Comment(BaseModel):
    """The commenter's JSON for one failed task (the shape `COMMENT_SCHEMA` validates)."""

    model_config = ConfigDict(extra="forbid")

    issues: list[str] = Field(max_length=3)
    actionable_changes: list[str] = Field(min_length=3, max_length=6)
    fit_within_screen: bool
    avoid_regressions: bool


def validate_comment(data: Any) -> Comment:
    """Check `data` against `COMMENT_SCHEMA` and that every change names a selector or id.

    Raises CommentValidationError listing all problems (for the repair round-trip).
    """
    validator = jsonschema.Draft202012Validator(COMMENT_SCHEMA)
    problems = [
        f"{'/'.join(str(p) for p in error.absolute_path) or '(root)'}: {error.message}"
        for error in sorted(validator.iter_errors(data), key=lambda e: list(e.absolute_path))
    ]
    if not problems:
        for index, change in enumerate(data["actionable_changes"]):
            if not _SELECTOR_PATTERN.search(change):
                problems.append(f"actionable_changes/{index}: names no selector or id (use #id, .class or `selector`)")
    if problems:
        raise CommentValidationError(problems)
    return Comment.model_validate(data)


def principle_of(statement: str) -> str | None:
    """The principle a statement names (normalised spelling), if any."""
    match = re.search(_PRINCIPLE_PATTERN, statement)
    if not match:
        return None
    found = match.group(1).lower()
    return "predictable behaviour" if found.startswith("predictable") else found


def selectors_in(statement: str) -> list[str]:
    return [s.strip("`") for s in _SELECTOR_PATTERN.findall(statement)]


class CommentSource(BaseModel):
    """Where one merged comment came from."""

    task_id: str
    commenter: str = Field(description="Registry name: 'offline' or 'model'.")
    model: str | None = None
    mode: str = "dashboard"
    offline: bool = False
    valid: bool = True
    error: str | None = None


class TaskComment(BaseModel):
    """A commenter's answer for one task, with provenance (None comment when it never validated)."""

    app_id: str
    task_id: str
    task: str = ""
    commenter: str
    model: str | None = None
    mode: str = "dashboard"
    offline: bool = False
    comment: Comment | None = None
    attempts: int = 1
    error: str | None = None
    raw_replies: list[str] = Field(default_factory=list)
    facts: OfflineFacts | None = Field(default=None, description="What the offline commenter measured.")

    def source(self) -> CommentSource:
        shared = self.model_dump(include={"task_id", "commenter", "model", "mode", "offline", "error"})
        return CommentSource(**shared, valid=self.comment is not None)


class Feedback(BaseModel):
    """Everything the coder gets about one app from its failed rollouts (the `cua` revision mode)."""

    app_id: str
    issues: list[str] = Field(default_factory=list)
    actionable_changes: list[str] = Field(default_factory=list)
    fit_within_screen: bool = False
    avoid_regressions: bool = False
    sources: list[CommentSource] = Field(default_factory=list)
    dropped: int = Field(default=0, description="Statements removed as duplicates or over the cap.")
    offline: bool = Field(default=False, description="True when every source was the offline commenter.")
    facts: list[OfflineFacts] = Field(default_factory=list, description="Measured facts per task, for the offline coder.")
    defects: list[str] = Field(default_factory=list, description="GUI defects a detector found in the failed rollouts' "
                               "steps (`--feedback +defects`), one statement each naming the element and the step.")

    def render(self) -> str:
        """The feedback as the text block a coder prompt embeds."""
        lines = ["Issues the computer-use agent ran into:"] + [f"- {issue}" for issue in self.issues]
        lines += ["", "Actionable changes (each names the element and the principle it restores):"]
        lines += [f"{n}. {change}" for n, change in enumerate(self.actionable_changes, start=1)]
        if self.defects:
            lines += ["", "GUI defects detected in the agent's steps (fix each where it is):"]
            lines += [f"- {defect}" for defect in self.defects]
        lines += [
            "",
            f"fit_within_screen: {str(self.fit_within_screen).lower()} — "
            + ("bring every control the tasks need inside the viewport without scrolling." if self.fit_within_screen else "no change needed."),
            f"avoid_regressions: {str(self.avoid_regressions).lower()} — "
            + ("keep existing ids, functions and working controls." if self.avoid_regressions else "no constraint."),
        ]
        return "\n".join(lines)


MAX_ISSUES = 6
MAX_CHANGES = 10


def _normalise(text: str) -> str:
    return " ".join(re.sub(r"[^\w#.\-\[\]= ]+", " ", text.lower()).split())


def _rank_unique(statements: Iterable[tuple[str, str]], cap: int, by_target: bool) -> tuple[list[str], int]:
    """Deduplicate (task_id, statement) pairs; rank by the number of tasks raising each; cap."""
    groups: list[dict[str, Any]] = []
    total = 0
    for task_id, statement in statements:
        total += 1
        norm = _normalise(statement)
        targets = tuple(sorted(set(selectors_in(statement))))
        key = (targets, principle_of(statement))
        for group in groups:
            # The same element with the same principle is one change however it is worded;
            # similar wording about different elements ("give #a an id", "give #b an id") is not.
            same_target = by_target and targets and key == group["key"]
            similar = targets == group["key"][0] and difflib.SequenceMatcher(None, norm, group["norm"]).ratio() >= 0.85
            if norm == group["norm"] or same_target or similar:
                group["tasks"].add(task_id)
                break
        else:
            groups.append({"text": statement.strip(), "norm": norm, "key": key, "tasks": {task_id}, "order": len(groups)})
    groups.sort(key=lambda g: (-len(g["tasks"]), g["order"]))
    kept = [g["text"] for g in groups[:cap]]
    return kept, total - len(kept)


def merge_comments(
    app_id: str, comments: Iterable[TaskComment], max_issues: int = MAX_ISSUES, max_changes: int = MAX_CHANGES
) -> Feedback:
    """Merge the comments of an app's failed tasks into one deduplicated, capped `Feedback`.

    Comments that never validated are kept as sources (with their error) but contribute nothing.
    """
    comments = list(comments)
    valid = [c for c in comments if c.comment is not None]
    issues, dropped_issues = _rank_unique(((c.task_id, i) for c in valid for i in c.comment.issues), max_issues, False)
    changes, dropped_changes = _rank_unique(
        ((c.task_id, a) for c in valid for a in c.comment.actionable_changes), max_changes, True
    )
    return Feedback(
        app_id=app_id,
        issues=issues,
        actionable_changes=changes,
        fit_within_screen=any(c.comment.fit_within_screen for c in valid),
        avoid_regressions=any(c.comment.avoid_regressions for c in valid),
        sources=[c.source() for c in comments],
        dropped=dropped_issues + dropped_changes,
        offline=bool(comments) and all(c.offline for c in comments),
        facts=[c.facts for c in comments if c.facts is not None],
    )
