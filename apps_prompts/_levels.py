"""The rule that gives a task its level from its reference solution (README: "Task levels").

A task's level says how much an agent must do, so the rule counts what a user does: the steps of
the reference solution, plus one for the answer of a question-style task —

    1 step → paper · 2–3 → wood · 4–6 → bronze · 7–10 → silver · 11 or more, or a wait on the app's timer → gold

The bundled and GPT-5 task files apply it and raise a task by one level by hand where the steps
hide work (an exact value on a slider, a limit to find, a move that depends on what the game
shows); such a task's `level_rationale` says why, after "+1:".
"""

from __future__ import annotations

from ._models import LEVELS, Level, Task

STEP_LEVELS: tuple[tuple[int, Level], ...] = ((1, Level.paper), (3, Level.wood), (6, Level.bronze), (10, Level.silver))
"""Up to this many steps → this level; more than the last → gold."""


def solution_steps(task: Task) -> int:
    """What the rule counts: the reference solution's steps, plus one for the answer a question-style task needs."""
    return len(task.solution) + (task.answer_check is not None)


def level_from_solution(task: Task) -> Level:
    """The level the rule gives `task` (before any raise by hand)."""
    if any(step.action == "wait" for step in task.solution):
        return Level.gold
    steps = solution_steps(task)
    return next((level for most, level in STEP_LEVELS if steps <= most), Level.gold)


def level_above(level: Level) -> Level:
    """The next harder level (gold stays gold)."""
    return Level(LEVELS[min(LEVELS.index(level.value) + 1, len(LEVELS) - 1)])
