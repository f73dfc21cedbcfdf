"""App specs and tasks: models, loaders (ours and AUI-Gym's), the bundled sample apps."""

from ._loader import (
    BUNDLED_DIR,
    AppLoadError,
    AppSpecError,
    LoadResult,
    load_app,
    load_apps,
    reference_html_path,
)
from ._models import AppPrompt, AppSpec, Domain, SolutionStep, Task, TaskCategory, slugify
from ._proposer import get_proposer, propose_tasks
from ._proposer_files import load_tasks_file
from ._schema import app_spec_json_schema

__all__ = [
    "BUNDLED_DIR",
    "AppLoadError",
    "AppPrompt",
    "AppSpec",
    "AppSpecError",
    "Domain",
    "LoadResult",
    "SolutionStep",
    "Task",
    "TaskCategory",
    "app_spec_json_schema",
    "get_proposer",
    "load_tasks_file",
    "propose_tasks",
    "load_app",
    "load_apps",
    "reference_html_path",
    "slugify",
]
