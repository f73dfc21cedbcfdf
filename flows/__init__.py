"""Prefect flows of the design loop (generate → propose → verify → roll out → dashboard → comment
→ revise, for R rounds) and the sweep over apps × coders × CUAs × modes: orchestration only. What a
run writes is the `results` package's; the `aui` command sits on top and drives these.

    config = make_config({"app_ids": ["unit-converter"], "rounds": 1})   # or load_config("sweep.yaml")
    outcomes = asyncio.run(sweep(config))                                 # → runs/<name>/results.*, report.html
    print(results.markdown_table(results.table_rows(outcomes)))

Public names load on first use (PEP 562), so `import flows` — and the CLI's checks of bad input —
do not start Prefect; Prefect's settings for this project are applied before it is imported.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ._prefect_env import configure_prefect_env

configure_prefect_env()

_PUBLIC = {
    # the flows and the loop
    "sweep": "_sweep", "sweep_without_prefect": "_sweep", "run_tracks": "_sweep", "run_context": "_sweep",
    "design_loop": "_loop", "judge_and_revise": "_loop", "run_track": "_loop",
    "Stages": "_track", "PREFECT_STAGES": "_track", "PLAIN_STAGES": "_track", "TrackSteps": "_track",
    "MODEL_RETRIES": "_stages", "stage_retry_delays": "_stages", "use_browser_slots": "_rollouts",
    # what stages take and return
    "FileRef": "_refs", "RunContext": "_refs", "AgentSettings": "_refs", "VersionRef": "_refs", "TasksRef": "_refs",
    "VerifyRef": "_refs", "RolloutRef": "_refs", "FeedbackRef": "_refs", "VariantRef": "_refs",
    # what a run leaves behind besides its results (those are the `results` package's)
    "finish_run": "_finish", "write_manifest": "_finish", "ROLE_PROMPTS": "_finish", "viewer_url": "_artifacts", "round_table": "_artifacts",
    # what the `aui` command drives: stop signals, progress, budgets, Dask
    "Stopped": "_stop", "SignalListener": "_stop", "run_stoppable": "_stop", "listen_from_startup": "_stop",
    "watch_this_process": "_orphans",
    "RunProgress": "_progress", "LimitSampler": "_progress", "watching": "_progress", "format_duration": "_progress",
    "OPTIONAL_KINDS": "_progress", "what_limits": "_progress", "budget_line": "_budget",
    "dask_task_runner": "_dask",
    # design insights' ablations (issue 31): a revision made again without one principle, on the same tasks
    "ablate": "_ablation", "ablate_run": "_ablation", "ablation_flow": "_ablation",
    # GUI defects (issue 18): defect runs and detectors scored on them
    "inject_run": "_defects", "eval_run": "_defects", "dataset_inputs": "_defects", "DefectRunError": "_defects",
}

__all__ = sorted([*_PUBLIC, "configure_prefect_env"])


def __getattr__(name: str) -> Any:
    module = _PUBLIC.get(name)
    if module is None:
        raise AttributeError(f"module 'flows' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value  # later look-ups skip this function
    return value


if TYPE_CHECKING:  # what editors and type checkers see
    from ._ablation import ablate, ablate_run, ablation_flow
    from ._artifacts import round_table, viewer_url
    from ._budget import budget_line
    from ._dask import dask_task_runner
    from ._defects import DefectRunError, dataset_inputs, eval_run, inject_run
    from ._finish import ROLE_PROMPTS, finish_run, write_manifest
    from ._loop import design_loop, judge_and_revise, run_track
    from ._orphans import watch_this_process
    from ._progress import OPTIONAL_KINDS, LimitSampler, RunProgress, format_duration, watching, what_limits
    from ._refs import (
        AgentSettings,
        FeedbackRef,
        FileRef,
        RolloutRef,
        RunContext,
        TasksRef,
        VariantRef,
        VerifyRef,
        VersionRef,
    )
    from ._rollouts import use_browser_slots
    from ._stages import MODEL_RETRIES, stage_retry_delays
    from ._stop import SignalListener, Stopped, listen_from_startup, run_stoppable
    from ._sweep import run_context, run_tracks, sweep, sweep_without_prefect
    from ._track import PLAIN_STAGES, PREFECT_STAGES, Stages, TrackSteps
