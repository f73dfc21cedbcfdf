"""The `aui` command: a thin layer over the library (`flows`, `results`, `viewer` and the roles); each module owns its commands.

    aui run | sweep | report | ui | deploy            (`_run.py`: the design loop and its outputs)
    aui view [RUN_DIR …]                              (`_view.py`: the run viewer; `aui serve` is its old name)
    aui apps list | import | validate | fetch           (`_apps.py`)
    aui label import                                    (`_labels.py`: people's labels of a run)
    aui verify / rollout / dashboard / comment          (`_stages.py`: one stage at a time)
    aui judge RUN_DIR                                   (`_labels.py`: judges of a finished run's trajectories)
    aui variations [--show APP_ID]                      (`_variations.py`: the variations, and pictures of an app in each)
    aui defects inject | eval                           (`_defects.py`: GUI defects, GTArena's way)
    aui insights RUN_DIR … | ablate RUN_DIR --principle P   (`_insights.py`: which changes helped; ablations)
    aui export RUN_DIR … --out DIR                      (`_export.py`: runs out as a dataset, Parquet + card)

The package sits on top: nothing else imports it. Its names load on first use (PEP 562), so the
entry point (`_entry.main`) can listen for a stop signal before Typer, Prefect and Playwright load.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__all__ = [
    "app", "apps_app", "comment_command", "dashboard_command", "defects_app", "deploy", "export_command",
    "insights_command", "judge_command", "label_app", "report", "rollout_command", "run", "serve_command",
    "sweep_command", "ui", "variation_table", "variations_command", "verify_command", "view_command",
]


def __getattr__(name: str) -> Any:
    if name not in __all__:
        raise AttributeError(f"module 'aui' has no attribute {name!r}")
    value = getattr(importlib.import_module("._app", __name__), name)
    globals()[name] = value  # later look-ups skip this function
    return value


if TYPE_CHECKING:  # what editors and type checkers see: `_app` holds every name of `__all__`
    from ._app import *  # noqa: F403
