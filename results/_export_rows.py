"""A run folder read as the rows of the exported tables: steps, tasks and revisions (`results._dataset_card`).

Rows are made one at a time (a generator per table, one trajectory in memory at a time), so the writer decides
how many it holds. Every file a row needs is read here; a missing or unreadable one is an `ExportError` naming it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from apps_prompts import Task
from cua import (
    TRAJECTORY_FILE,
    Action,
    RolloutConfig,
    Step,
    Trajectory,
    action_from_screen,
    format_computer_action,
    format_uitars,
)
from llm import first_problem
from verifier import VERDICTS_FILE, AppVerdicts

from ._files import RunResults, read_manifest, read_results
from ._insight_records import Change, read_insights
from ._outcomes import AppRoundResult, TaskOutcome, revised_pairs

DEFAULT_VARIATION = "default"
UITARS_SPACE = "uitars-1.5"
"""The model space `action_uitars` is written in: UI-TARS-1.5's smart-resized pixels."""
EXECUTED_SCROLL_PX = RolloutConfig().scroll_px
"""How far a scroll that names no distance went (the rollouts' default; a trajectory does not record it)."""


class ExportError(ValueError):
    """A run folder cannot be exported: the message names the file or folder at fault and what is wrong."""


@dataclass
class RunSource:
    """One run folder to export: its name (the `run` column), results and manifest."""

    name: str
    folder: Path
    results: RunResults
    manifest: dict
    changes: list[Change] | None = None
    _tasks: dict[str, dict[str, Task]] = field(default_factory=dict)

    @property
    def offline_roles(self) -> list[str]:
        """The roles offline providers played: the manifest's record, else results.json's."""
        return list(self.manifest.get("offline_roles") or self.results.offline_roles or [])

    @classmethod
    def read(cls, folder: Path) -> "RunSource":
        """Raises: ExportError naming a missing or malformed results.json / manifest.json / insights.json."""
        try:
            results, manifest = read_results(folder), read_manifest(folder)
            insights = read_insights(folder)
        except (FileNotFoundError, ValueError) as exc:
            raise ExportError(str(exc)) from None
        return cls(name=folder.resolve().name, folder=folder, results=results, manifest=manifest,
                   changes=insights.changes if insights is not None else None)

    def tasks(self, app_id: str) -> dict[str, Task]:
        """The app's tasks by id, as the run's proposer wrote them (`apps/<app>/tasks-*.json`)."""
        if app_id not in self._tasks:
            found: dict[str, Task] = {}
            for path in sorted((self.folder / "apps" / app_id).glob("tasks-*.json")):
                try:
                    found.update({task.id: task for task in map(Task.model_validate, json.loads(read_bytes(path)))
                                  if task.id not in found})
                except (ValueError, TypeError) as exc:
                    raise ExportError(f"{path}: not a tasks file: {first_problem(exc)}") from None
            self._tasks[app_id] = found
        return self._tasks[app_id]


def read_bytes(path: Path) -> bytes:
    """Raises: ExportError naming the file when it is missing or cannot be read."""
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise ExportError(f"{path}: missing — the run folder is incomplete") from None
    except OSError as exc:
        raise ExportError(f"{path}: cannot be read ({exc.strerror or exc})") from None


def read_text(path: Path) -> str:
    try:
        return read_bytes(path).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ExportError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None


def _track_columns(run: RunSource, result: AppRoundResult) -> dict:
    return {"run": run.name, "app_id": result.app_id, "domain": result.domain, "version": result.round,
            "coder": result.coder, "cua": result.cua, "mode": result.mode, "commenter_mode": result.commenter_mode}


def episodes(result: AppRoundResult) -> Iterator[tuple[str, int, TaskOutcome]]:
    """(variation, repeat, outcome) for every rollout of an app version: its repeats, then each variation's."""
    looks = [(DEFAULT_VARIATION, result), *((variation.variation, variation) for variation in result.variations)]
    for name, look in looks:
        for repeat, outcomes in look.every_repeat():
            for outcome in outcomes:
                yield name, repeat, outcome


def load_trajectory(folder: Path) -> Trajectory:
    """Raises: ExportError naming trajectory.json when it is missing or not a trajectory."""
    try:
        return Trajectory.load(folder)
    except FileNotFoundError:
        raise ExportError(f"{folder / TRAJECTORY_FILE}: missing — the run folder is incomplete") from None
    except ValueError as exc:
        raise ExportError(str(exc).splitlines()[0]) from None


def step_rows(run: RunSource) -> Iterator[dict]:
    """One row per step of every rollout of the run, in results.json's order (one trajectory read at a time)."""
    for result in run.results.apps:
        track = _track_columns(run, result)
        for variation, repeat, outcome in episodes(result):
            if not outcome.trajectory:
                continue  # no rollout: the task had no valid checker, or the version could not be judged
            folder = run.folder / outcome.trajectory
            trajectory = load_trajectory(folder)
            episode = {**track, "variation": variation, "repeat": repeat, "task_id": outcome.task_id,
                       "level": outcome.level, "instruction": trajectory.task, "episode": outcome.trajectory,
                       "steps": len(trajectory.steps), "viewport_width": trajectory.viewport_width,
                       "viewport_height": trajectory.viewport_height, "policy": trajectory.policy,
                       "model": trajectory.model, "cua_offline": trajectory.offline, "success": outcome.passed}
            yield from _episode_rows(folder, trajectory, episode)


def _episode_rows(folder: Path, trajectory: Trajectory, episode: dict) -> Iterator[dict]:
    seen = trajectory.initial_screenshot
    rewarded = False
    last = len(trajectory.steps)
    for number, step in enumerate(trajectory.steps, 1):
        reward = 1.0 if step.checker_passed and not rewarded else 0.0
        rewarded = rewarded or step.checker_passed
        ended = number == last and trajectory.termination is not None
        yield {**episode, "step": number, "screenshot": _png(folder, seen), "screenshot_file": seen,
               "final_screenshot": _png(folder, step.screenshot) if number == last else None,
               **action_columns(step, trajectory), "thought": step.thought, "raw_text": step.raw_text,
               "checker_passed": step.checker_passed, "reward": reward, "done": ended,
               "termination": trajectory.termination.value if ended else None}
        seen = step.screenshot or seen  # a step that kept no screenshot leaves the last one on the screen


_PNG_START, _PNG_END = b"\x89PNG\r\n\x1a\n", b"IEND\xaeB`\x82"


def _png(folder: Path, name: str | None) -> bytes | None:
    """The screenshot's bytes as they are (never re-encoded), refused when they are not a whole PNG (cut short, or
    another format): a check of its signature and closing chunk, not a decode, so a large export stays fast."""
    if not name:
        return None
    data = read_bytes(folder / name)
    if not (data.startswith(_PNG_START) and data.endswith(_PNG_END)):
        raise ExportError(f"{folder / name}: not a whole PNG (cut short, or another format)")
    return data


def action_columns(step: Step, trajectory: Trajectory) -> dict:
    """A step's action in the project's JSON, UI-TARS-1.5 text and an OpenAI computer-use item (None without one)."""
    action: Action | None = step.screen_action
    model_action = step.model_action
    uitars = computer_use = None
    if action is not None:
        in_model_space = action_from_screen(action, UITARS_SPACE, trajectory.viewport_width, trajectory.viewport_height)
        uitars = format_uitars(in_model_space, step.thought or None)
        if action.kind == "scroll" and action.amount is None:  # say the distance the executor scrolled by
            action = action.model_copy(update={"amount": float(EXECUTED_SCROLL_PX)})
        item = format_computer_action(action)
        computer_use = json.dumps(item, ensure_ascii=False) if item is not None else None
    return {"action_json": step.screen_action.model_dump_json() if step.screen_action is not None else None,
            "model_action_json": model_action.model_dump_json() if model_action is not None else None,
            "coordinate_space": trajectory.coordinate_space, "action_uitars": uitars,
            "action_computer_use": computer_use}


def task_rows(run: RunSource) -> Iterator[dict]:
    """One row per task of every app version as results.json lists it (a version judged by two tracks: twice)."""
    for result in run.results.apps:
        if not result.tasks:
            continue  # a round that could not be judged at all
        path = run.folder / Path(result.html).parent / VERDICTS_FILE
        try:
            verdicts = AppVerdicts.model_validate_json(read_bytes(path))
        except ValidationError as exc:
            raise ExportError(f"{path}: not a verdicts file: {first_problem(exc)}") from None
        outcomes = {outcome.task_id: outcome for outcome in result.tasks}
        specs = run.tasks(result.app_id)
        for verdict in verdicts.verdicts:
            outcome, spec = outcomes.get(verdict.task_id), specs.get(verdict.task_id)
            yield {**_track_columns(run, result), "task_id": verdict.task_id,
                   "description": spec.description if spec else None,
                   "expected_outcome": spec.expected_outcome if spec else None,
                   "level": outcome.level if outcome and outcome.level else (spec.level.value if spec and spec.level else None),
                   "checker": verdict.checker, "checker_source": verdict.checker_source,
                   "checker_kind": verdict.checker_kind, "checker_valid": verdict.valid, "proof": verdict.proof,
                   "proven": verdict.proven, "proof_reason": verdict.proof_reason,
                   "reference_solution": json.dumps([step.model_dump(mode="json") for step in verdict.solution],
                                                    ensure_ascii=False),
                   "further_checks": json.dumps([check.model_dump(mode="json") for check in verdict.checks],
                                                ensure_ascii=False),
                   "verifier": verdict.model, "verifier_offline": verdict.offline,
                   "success": outcome.passed if outcome else False,
                   "episode": outcome.trajectory if outcome else None}


def revision_rows(run: RunSource) -> Iterator[dict]:
    """One row per revision of the run: the two versions, what the coder was told, what changed, what it did to SR."""
    for after, before in revised_pairs(run.results.apps):
        track = after.track
        feedback = run.folder / "apps" / after.app_id / track.folder / f"feedback-round-{before.round}.json"
        record = run.folder / Path(after.html).parent / "revision.json"
        record_text = read_text(record) if record.is_file() else None
        yield {**_track_columns(run, after),  # `version` is no column of `revisions`: Arrow leaves it out
               "round_from": before.round, "round_to": after.round, "coder_offline": _offline(record, record_text),
               "feedback": read_text(feedback) if feedback.is_file() else None, "revision_record": record_text,
               "changes": _changes(run, after, str(track)), "html_before": read_text(run.folder / before.html),
               "html_after": read_text(run.folder / after.html), **paired_sr(before, after)}


def _offline(path: Path, text: str | None) -> bool | None:
    if text is None:
        return None
    try:
        record = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ExportError(f"{path}: not valid JSON ({exc})") from None
    offline = record.get("offline") if isinstance(record, dict) else None
    return offline if isinstance(offline, bool) else None


def _changes(run: RunSource, after: AppRoundResult, track: str) -> list[dict] | None:
    if run.changes is None:
        return None
    return [change.model_dump(exclude={"app_id", "track", "round", "revised_from"}) for change in run.changes
            if change.app_id == after.app_id and change.track == track and change.round == after.round]


def paired_sr(before: AppRoundResult, after: AppRoundResult) -> dict:
    """SR of both versions on the same tasks (valid checker on both, repeat 0), and the tasks gained and lost."""
    old = {outcome.task_id: outcome for outcome in before.tasks if outcome.checker_valid}
    new = {outcome.task_id: outcome for outcome in after.tasks if outcome.checker_valid}
    compared = [task for task in new if task in old]
    gained = [task for task in compared if new[task].passed and not old[task].passed]
    lost = [task for task in compared if old[task].passed and not new[task].passed]
    count = len(compared)
    return {"tasks_compared": count,
            "sr_before": sum(old[task].passed for task in compared) / count if count else None,
            "sr_after": sum(new[task].passed for task in compared) / count if count else None,
            "tasks_gained": gained, "tasks_lost": lost}
