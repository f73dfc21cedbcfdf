"""An experiment before it runs: its config, who plays each role, what it covers, and whether it can run.

    config = make_config({"app_ids": ["unit-converter"], "rounds": 1})   # or load_config("sweep.yaml")
    problems = check_config(config)                                       # [] or what stops it, by field
    offline_roles(config)                                                 # the roles played offline
    sweep_tracks(config)                                                  # coders × CUAs × modes

`ExperimentConfig` is the one description of a run (a YAML file's fields, the `aui run` flags and
`make_config`'s keys are the same names). `is_offline_provider` is the one rule behind every
"offline" label a run prints and records. `check_config` / `check_run_size` are what `aui run`
checks before anything starts (the apps, the tasks, the policies, the models and their endpoints,
the number of calls); `run_size` estimates a run's stages, calls and cost. Nothing here starts
Prefect, a browser or a model: `flows` runs what is described here.
"""

from ._config import (
    DEFAULT_LEVELS,
    UNLEVELLED_MAX_STEPS,
    Carry,
    CommenterMode,
    ConfigError,
    ExperimentConfig,
    FeedbackSource,
    LevelSetting,
    RevisionMode,
    RunBudget,
    TraceMode,
    load_config,
    make_config,
)
from ._offline_names import ROLES, is_offline_provider, registry_at
from ._offline_roles import RolePlayer, offline_coders, offline_roles, role_players, run_registry, runs_offline
from ._plan import apps_with_v0, sweep_apps, sweep_tracks
from ._preflight import check_config, check_run_size
from ._run_size import RoleCalls, RunSize, expected_stages, run_size, tasks_per_app

__all__ = [
    "DEFAULT_LEVELS", "ROLES", "UNLEVELLED_MAX_STEPS", "Carry", "CommenterMode", "ConfigError", "ExperimentConfig", "FeedbackSource",
    "LevelSetting", "RevisionMode", "RoleCalls", "RolePlayer", "RunBudget", "RunSize", "TraceMode", "apps_with_v0",
    "check_config", "check_run_size", "expected_stages", "is_offline_provider", "load_config", "make_config",
    "offline_coders", "offline_roles", "registry_at", "role_players", "run_registry", "run_size", "runs_offline",
    "sweep_apps", "sweep_tracks", "tasks_per_app",
]
