"""Which apps are environments: the same inputs `aui run` reads (`--apps`, `--v0-dir`, `--tasks-file`), registered by id.

An app is offered when it has a page to serve (its v0 `DIR/<id>/index.html`, else the spec's reference
HTML) and at least one task with a reference checker and solution (the file's tasks, else the spec's).
Whether a task's checker is proven is decided when an environment is made (`_proofs`), not here:
registering reads YAML only — no browser.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

import gymnasium

from apps_prompts import BUNDLED_DIR, AppSpec, Task, TasksFileError, load_apps, load_tasks_file, reference_html_path

NAMESPACE = "aui"
VERSION = 0
ENTRY_POINT = "environments:AppGymEnv"
VECTOR_ENTRY_POINT = "environments:AppVectorEnv"

logger = logging.getLogger("environments")


@dataclass(frozen=True)
class LoadedApp:
    """One app as an environment serves it: its spec (tasks as given), its page and where that came from."""

    spec: AppSpec
    html: str
    html_path: Path

    def solvable(self) -> list[Task]:
        """The tasks that can be offered at all: a reference checker and a reference solution."""
        return [task for task in self.spec.tasks if task.checker and task.solution]


def env_id(app_id: str, namespace: str = NAMESPACE) -> str:
    """`aui/<app-id>-v0`."""
    return f"{namespace}/{app_id}-v{VERSION}"


def loaded_app(spec: AppSpec, v0_dir: str | Path | None = None, tasks_file: str | Path | None = None) -> LoadedApp:
    """`spec` with its page (`v0_dir/<id>/index.html` when given, else its reference HTML) and its tasks (those of
    `tasks_file` when given). FileNotFoundError: no page; apps_prompts.TasksFileError: no tasks for it in the file."""
    if v0_dir is not None:
        path = Path(v0_dir) / spec.id / "index.html"
        if not path.is_file():
            raise FileNotFoundError(f"app '{spec.id}': no page at {path} (--v0-dir {v0_dir})")
    else:
        path = reference_html_path(spec)
        if path is None or not path.is_file():
            raise FileNotFoundError(f"app '{spec.id}': no reference HTML (give its page with v0_dir)")
    if tasks_file is not None:
        spec = spec.model_copy(update={"tasks": load_tasks_file(tasks_file, spec.id)})
    return LoadedApp(spec=spec, html=path.read_text(encoding="utf-8"), html_path=path)


def register_apps(apps: str | Path = BUNDLED_DIR, v0_dir: str | Path | None = None,
                  tasks_file: str | Path | None = None, namespace: str = NAMESPACE) -> list[str]:
    """Register one Gymnasium environment per app of `apps` (a spec file or folder: ours or AUI-Gym's),
    served from `v0_dir/<id>/index.html` when given (else each spec's reference HTML), with the tasks of
    `tasks_file` when given (else each spec's). Returns the ids registered, e.g. `["aui/unit-converter-v0"]`.

    Apps without a page, or without a task that has a reference checker and solution, are left out
    (logged at INFO with the reason). Registering the same app from the same inputs again is a no-op.

    Raises:
        apps_prompts.AppSpecError: a spec file does not load (every bad file is named).
        apps_prompts.TasksFileError: the tasks file is unreadable or malformed.
        NotADirectoryError: `v0_dir` is not a folder.
        ValueError: no app could be registered (the first reasons are named).
    """
    if v0_dir is not None and not Path(v0_dir).is_dir():
        raise NotADirectoryError(f"v0_dir {v0_dir} is not a folder of <app-id>/index.html")
    apps = Path(apps).resolve()
    kwargs = {"apps": str(apps), "v0_dir": str(Path(v0_dir).resolve()) if v0_dir is not None else None,
              "tasks_file": str(Path(tasks_file).resolve()) if tasks_file is not None else None}
    registered, skipped = [], {}
    for spec in load_apps(apps).raise_for_errors():
        reason = _why_not(spec, v0_dir, tasks_file)
        if reason is not None:
            skipped[spec.id] = reason
            logger.info("environments: %s is not registered: %s", spec.id, reason)
            continue
        name = env_id(spec.id, namespace)
        entry = {"app_id": spec.id, **kwargs}
        known = gymnasium.registry.get(name)
        if known is None or known.kwargs != entry or known.entry_point != ENTRY_POINT:
            gymnasium.register(id=name, entry_point=ENTRY_POINT, vector_entry_point=VECTOR_ENTRY_POINT, kwargs=entry)
        registered.append(name)
    if not registered:
        reasons = "; ".join(f"{app_id}: {reason}" for app_id, reason in list(skipped.items())[:3])
        raise ValueError(f"no app of {apps} can be an environment ({reasons or 'no app specs there'})")
    return registered


def _why_not(spec: AppSpec, v0_dir: str | Path | None, tasks_file: str | Path | None) -> str | None:
    """Why `spec` cannot be an environment, or None."""
    try:
        app = loaded_app(spec, v0_dir, tasks_file)
    except FileNotFoundError as error:
        return str(error)
    except TasksFileError as error:
        if f"no tasks for app '{spec.id}'" in str(error):
            return "the tasks file has no tasks for it"
        raise
    if not app.solvable():
        return "no task has both a reference checker and a reference solution"
    return None
