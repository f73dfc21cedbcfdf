"""Tasks given by file: a YAML or JSON list of tasks, for one app or keyed by app id.

Accepted shapes (YAML or JSON):

    - {id: add-milk, description: ..., expected_outcome: ...}        # a list: tasks for any app
    tasks: [ ... ]                                                    # the same under `tasks`
    tiny-kanban: [ ... ]                                              # a mapping app id -> list
    - {app_id: tiny-kanban, id: ..., ...}                             # a list with app_id per task
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from ._models import Task


class TasksFileError(ValueError):
    """A tasks file could not be used; the message names the file, the entry and the field."""


def load_tasks_file(path: str | Path, app_id: str | None = None) -> list[Task]:
    """The tasks in `path` for `app_id` (or all of them when the file is not keyed by app).

    Raises:
        TasksFileError: unreadable file, wrong shape, an invalid task (names the entry and the
            field), a duplicate task id (names it), or no tasks for `app_id` in a keyed file.
    """
    path = Path(path)
    entries = _entries_for(_read(path), path, app_id)
    tasks: list[Task] = []
    seen: dict[str, int] = {}
    for index, entry in enumerate(entries):
        where = f"{path}: task {index + 1}"
        if not isinstance(entry, dict):
            raise TasksFileError(f"{where}: expected a mapping with id, description, expected_outcome; got {type(entry).__name__}")
        entry = {k: v for k, v in entry.items() if k not in ("app_id", "app")}
        try:
            task = Task.model_validate(entry)
        except ValidationError as error:
            first = error.errors()[0]
            field = ".".join(str(part) for part in first["loc"]) or "<task>"
            label = f" ({entry.get('id')!r})" if entry.get("id") else ""
            raise TasksFileError(f"{where}{label}: field '{field}': {first['msg']}") from None
        if task.id in seen:
            raise TasksFileError(
                f"{path}: duplicate task id '{task.id}' (tasks {seen[task.id]} and {index + 1})"
                + (f" for app '{app_id}'" if app_id else "")
            )
        seen[task.id] = index + 1
        tasks.append(task)
    return tasks


def tasks_file_app_ids(path: str | Path) -> list[str]:
    """The app ids a tasks file has tasks for, in its order: its keys (keyed by app id) or its tasks' `app_id`s;
    [] for tasks meant for any app. Raises TasksFileError for an unreadable file or not a tasks file's shape."""
    data = _read(Path(path))
    if isinstance(data, dict):
        return [str(app_id) for app_id in data]
    named = (entry.get("app_id") or entry.get("app") for entry in data if isinstance(entry, dict))
    return list(dict.fromkeys(str(app_id) for app_id in named if app_id))


def _read(path: Path) -> list | dict:
    """The file's tasks: a list (a `tasks:` mapping's list), or a mapping of app id to tasks."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise TasksFileError(f"tasks file not found: {path}") from None
    except (OSError, UnicodeDecodeError) as error:
        raise TasksFileError(f"cannot read tasks file {path}: {error}") from None
    try:
        data = json.loads(text) if path.suffix.lower() == ".json" else yaml.safe_load(text)
    except (ValueError, yaml.YAMLError) as error:
        kind = "JSON" if path.suffix.lower() == ".json" else "YAML"
        raise TasksFileError(f"{path}: not valid {kind}: {str(error).splitlines()[0]}") from None
    if isinstance(data, dict) and isinstance(data.get("tasks"), list) and not _keyed_by_app(data):
        data = data["tasks"]
    if not isinstance(data, (list, dict)):
        raise TasksFileError(f"{path}: expected a list of tasks or a mapping of app id to tasks, "
                             f"got {type(data).__name__}")
    return data


def _entries_for(data: list | dict, path: Path, app_id: str | None) -> list[Any]:
    if isinstance(data, list):
        if app_id is not None and any(isinstance(e, dict) and ("app_id" in e or "app" in e) for e in data):
            return [e for e in data if isinstance(e, dict) and (e.get("app_id") or e.get("app")) == app_id]
        return data
    if app_id is None:
        raise TasksFileError(f"{path}: tasks are keyed by app id ({', '.join(map(str, data))}); say which app")
    if app_id not in data:
        raise TasksFileError(f"{path}: no tasks for app '{app_id}' (apps in the file: {', '.join(map(str, data))})")
    entries = data[app_id]
    if not isinstance(entries, list):
        raise TasksFileError(f"{path}: '{app_id}' must map to a list of tasks, got {type(entries).__name__}")
    return entries


def _keyed_by_app(data: dict) -> bool:
    return all(isinstance(v, list) for v in data.values()) and len(data) > 1
