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
    "load_app",
    "load_apps",
    "reference_html_path",
    "slugify",
]
