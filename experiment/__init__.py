"""An experiment before it runs: its config, who plays each role, what it covers, and whether it can run.

    config = make_config({"app_ids": ["unit-converter"], "rounds": 1})   # or load_config("sweep.yaml")
    plan = check_config(config)                  # a checked Plan: app ids, tracks, each role's provider; or ConfigError
    plan.offline_roles()                                                  # the roles played offline
    plan.provider("cua", "heuristic")                                     # RoleProvider(role, name, offline, model)

`ExperimentConfig` is the one description of a run (a YAML file's fields, the `aui run` / `aui sweep` flags —
each declared once, on its field: `config_flags` — and `make_config`'s keys are the same names).
`is_offline_provider` is the one rule behind every "offline" label a run prints and records.
`check_config` / `check_run_size` are what `aui run` checks before anything starts (the apps, the tasks,
the policies, the models and their endpoints, the number of calls); `check_config` returns the `Plan` the
sweep runs. `run_size` estimates a run's stages, calls and cost. Nothing here starts Prefect, a browser or
a model: `flows` runs what is described here.
"""

from ._config import (
    DEFAULT_LEVELS,
    GROUPS,
    UNLEVELLED_MAX_STEPS,
    Carry,
    CommenterMode,
    ConfigError,
    ConfigFlag,
    ExperimentConfig,
    FeedbackSource,
    Flag,
    LevelSetting,
    RevisionMode,
    RunBudget,
    TraceMode,
    command_config,
    config_flags,
    load_config,
    make_config,
)
from ._offline_roles import ROLES, is_offline_provider
from ._players import RoleProvider, offline_roles, resolve_roles, role_players
from ._preflight import Plan, check_config, check_run_size
from ._run_size import RoleCalls, RunSize, expected_stages, run_size, tasks_per_app

__all__ = [
    "DEFAULT_LEVELS", "GROUPS", "ROLES", "UNLEVELLED_MAX_STEPS", "Carry", "CommenterMode", "ConfigError", "ConfigFlag",
    "ExperimentConfig", "FeedbackSource", "Flag", "LevelSetting", "Plan", "RevisionMode", "RoleCalls", "RoleProvider", "RunBudget",
    "RunSize", "TraceMode", "check_config", "check_run_size", "command_config", "config_flags",
    "expected_stages", "is_offline_provider", "load_config", "make_config", "offline_roles",
    "resolve_roles", "role_players", "run_size", "tasks_per_app",
]
