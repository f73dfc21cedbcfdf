"""Checks a config before a sweep starts, so bad input fails in seconds with one line naming it, and returns the
checked `Plan` the sweep runs: the app ids, the tracks and each role's provider, resolved once.

Everything here is something the sweep would otherwise find only deep inside a flow — after the
Prefect server started, after a stage's retries, with a traceback: a malformed app spec, an
unknown app id, a `--v0-dir` without one of the apps, a tasks file with a duplicate id, a model
or CUA policy no registry knows, a model whose key variable is unset, an endpoint nobody answers.
"""

from __future__ import annotations

import os
import socket
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field

from apps_prompts import TasksFileError, load_apps
from cua.policies import get_policy
from llm import ModelConfigError, RoleProvider, load_model_registry
from results import Track

from ._config import MODEL_BOUND_SLOTS, ConfigError, ExperimentConfig
from ._offline_roles import ROLE_FIELDS
from ._players import offline_labels, players_of, resolve_roles
from ._run_size import RunSize, known_tasks, run_size, sweep_tracks, tasks_per_app

if TYPE_CHECKING:
    from llm import ModelConfig

PROBE_TIMEOUT_S = 3.0
"""How long an endpoint may take to accept a TCP connection before the run is refused."""


class Plan(BaseModel):
    """A run as its pre-flight found it usable: every name resolved once, every app id checked."""

    model_config = ConfigDict(frozen=True)

    app_ids: list[str] = Field(description="The apps the sweep runs, in order (checked against the specs and v0_dir).")
    tracks: list[Track] = Field(description="coders × CUAs × revision modes × commenter modes (`sweep_tracks`).")
    providers: list[RoleProvider] = Field(description="Each role's provider, one per coder and per CUA policy.")
    tasks: dict[str, int] = Field(description="How many tasks each app will have (`tasks_per_app`).")
    rollout_slots: int = Field(description="Rollouts in flight at once (`rollout_slots`).")

    def provider(self, role: str, name: str | None = None) -> RoleProvider:
        """The provider of `role` (named `name`, for the coder and the CUA of a track)."""
        return next(p for p in self.providers if p.role == role and name in (None, p.name))

    def players(self, track: Track | None = None) -> list[RoleProvider]:
        """The providers the run (or one `track` of it) uses."""
        return players_of(self.providers, track)

    def offline_roles(self, track: Track | None = None) -> list[str]:
        """The roles played by offline providers, as every output labels them (`offline_labels`)."""
        return offline_labels(self.players(track), track)

    @property
    def offline(self) -> bool:
        """Whether every role the run uses is played by an offline provider (no model endpoint is called)."""
        return all(player.offline for player in self.players())

    @property
    def models(self) -> list[str]:
        """The registry names (or roles) of every model the run calls."""
        return sorted({player.model for player in self.players() if player.model and not player.offline})


def check_config(config: ExperimentConfig, *, source: str = "config", probe_endpoints: bool = True) -> Plan:
    """The run's checked `Plan` (app ids, tracks, each role's provider resolved once), once every input it names is
    usable.

    `source` (the config file, or "flags") starts the message. With `probe_endpoints`, every
    endpoint the run will call must accept a TCP connection within `PROBE_TIMEOUT_S`.

    Raises:
        ConfigError: the first problem found, in one line naming the file, field or value.
    """
    try:
        try:
            providers = resolve_roles(config, strict=True)
        except LookupError as exc:
            raise ConfigError(str(exc), field="cua_policies") from None
        _check_every_model_plays(config, providers)
        _check_run_folder(config.run_dir)
        app_ids = _check_apps(config, providers)
        try:
            tasks = tasks_per_app(config, app_ids, providers)
        except TasksFileError as exc:
            raise ConfigError(str(exc), field="tasks_file") from None
        _check_task_counts(config, tasks, providers)
        _check_judge_checks(config, app_ids, providers)
        models = _check_models(config, players_of(providers))
        _check_policy_options(config, providers)
        if probe_endpoints and models:
            _probe_endpoints(models)
    except ConfigError as exc:
        raise ConfigError(_blamed(exc, source, config._flags)) from None
    return Plan(app_ids=app_ids, tracks=sweep_tracks(config), providers=providers, tasks=tasks,
                rollout_slots=rollout_slots(config, providers))


def _blamed(problem: ConfigError, source: str, flags: dict[str, str]) -> str:
    """`problem` blamed on the flag that set its field, if one did (as `make_config` blames a bad value), else on
    `source`."""
    if problem.field in flags:
        return f"{flags[problem.field]}: {problem.args[0]}"
    return f"{source}: {problem}"


def _check_run_folder(run_dir: Path) -> None:
    """The run's folder can be made where `out_dir` says: no file stands where it or a folder above it goes."""
    standing = next(path for path in [run_dir, *run_dir.parents] if path.exists())
    if not standing.is_dir():
        raise ConfigError(f"{standing} is a file, where the run's folder {run_dir} goes", field="out_dir")


UNUSED_BECAUSE = {"commenter": "`feedback` has no 'commenter' (--feedback)",
                  "detector": "`feedback` has no 'defects' (--feedback +defects adds them)",
                  "translator": "no variation of the run translates (e.g. german)"}
"""Why a role a model was named for would not play: the run would ignore that model without a word."""


def _check_every_model_plays(config: ExperimentConfig, providers: list[RoleProvider]) -> None:
    """A model a flag named for a role the run does not use (or `--cua-model` beside offline policies only) is refused.
    A config file may keep a role's model for runs that use it (e.g. `detector:` beside `feedback: [commenter]`)."""
    for provider in providers:
        if not provider.used and not provider.offline and ROLE_FIELDS[provider.role] in config._flags:
            raise ConfigError(f"{provider.name!r} would play the {provider.role}, which this run does not use: "
                              f"{UNUSED_BECAUSE[provider.role]}", field=ROLE_FIELDS[provider.role])
    if config.cua_model and "cua_model" in config._flags and all(p.offline for p in providers if p.role == "cua"):
        raise ConfigError(f"{config.cua_model!r}: the run's CUA policies ({', '.join(config.cua_policies)}) call no model; "
                          "name one that does, e.g. --cua uitars",
                          field="cua_model")


def _check_apps(config: ExperimentConfig, providers: list[RoleProvider]) -> list[str]:
    try:
        loaded = load_apps(config.apps)
    except FileNotFoundError as exc:
        raise ConfigError(str(exc), field="apps") from None
    if loaded.errors:
        more = len(loaded.errors) - 1
        tail = f" (and {more} more problem(s): run `aui apps validate {config.apps}`)" if more else ""
        raise ConfigError(f"app spec {loaded.errors[0]}{tail}")
    known = [spec.id for spec in loaded.apps]
    unknown = [app_id for app_id in config.app_ids if app_id not in known]
    if unknown:
        raise ConfigError(f"unknown app id(s) {', '.join(map(repr, unknown))} in {config.apps} "
                          f"(known: {', '.join(known[:12])}{', ...' if len(known) > 12 else ''})", field="app_ids")
    app_ids = list(config.app_ids) or known
    if config.v0_dir is not None and any(p.role == "coder" and p.offline for p in providers):
        app_ids = apps_with_v0(config, app_ids)
    return app_ids


def apps_with_v0(config: ExperimentConfig, app_ids: list[str]) -> list[str]:
    """The offline coder starts from `v0_dir/ID/index.html`: named apps must have one; with no
    names, the run covers the apps that do (a 12-app folder against 52 prompts).

    Raises:
        ConfigError: a named app has no first version there, or none of the apps has one.
    """
    have = {path.parent.name for path in Path(config.v0_dir).glob("*/index.html")}
    if config.app_ids:
        missing = [app_id for app_id in app_ids if app_id not in have]
        if missing:
            raise ConfigError(f"--v0-dir {config.v0_dir}: no {missing[0]}/index.html (missing for {len(missing)} app(s): {', '.join(missing[:5])})")
        return app_ids
    chosen = [app_id for app_id in app_ids if app_id in have]
    if not chosen:
        raise ConfigError(f"--v0-dir {config.v0_dir}: none of the {len(app_ids)} apps in {config.apps} has an ID/index.html there")
    return chosen


def rollout_slots(config: ExperimentConfig, providers: list[RoleProvider]) -> int:
    """Rollouts in flight at once: `concurrency` if given, else what limits the run. Offline CUA policies are
    CPU-bound (an offline rollout keeps a core busy: Chromium draws, the heuristic reads the page), so one per
    core, at least 2 (on 2 cores, 6 in flight finished `make run` no sooner than 2: bench/make_run.py,
    2026-11-27); a model-backed policy waits on its model, so MODEL_BOUND_SLOTS."""
    if config.concurrency is not None:
        return config.concurrency
    if all(p.offline for p in providers if p.role == "cua"):
        return max(2, os.cpu_count() or 2)
    return MODEL_BOUND_SLOTS


def _check_task_counts(config: ExperimentConfig, tasks: dict[str, int], providers: list[RoleProvider]) -> None:
    """At most `max_tasks_per_app` tasks an app (blamed on it: the tasks come from a file, a spec or `tasks_per_app`)."""
    proposed = config.tasks_file is None and not next(p for p in providers if p.role == "proposer").offline
    where = f"in {config.tasks_file}" if config.tasks_file else "(field 'tasks_per_app')" if proposed else "in its spec"
    for app_id, count in tasks.items():
        if count > config.max_tasks_per_app:
            raise ConfigError(f"app {app_id!r} would have {count:,} tasks {where}; at most {config.max_tasks_per_app} "
                              f"per app: raise it to allow more", field="max_tasks_per_app")


def _check_judge_checks(config: ExperimentConfig, app_ids: list[str], providers: list[RoleProvider]) -> None:
    """A `flow` check reads the dashboard: only a model judge can; offline it is refused now, not after the rollouts."""
    known = known_tasks(config, app_ids, providers)
    if not next(p for p in providers if p.role == "judge").offline or known is None:
        return  # a model judges, or a model proposes the tasks (their checks are not known yet)
    for app_id, tasks in known.items():
        for task in tasks:
            if any(check.kind == "flow" for check in task.checks):
                raise ConfigError(f"task {task.id!r} of app {app_id!r} has a flow check, which needs a model judge "
                                  f"(field 'judge': a model name or role, e.g. judge); the offline judge reads the final "
                                  f"page's text only and cannot judge a flow")


def check_run_size(config: ExperimentConfig, plan: Plan, *, assume_yes: bool, source: str = "config") -> RunSize:
    """The run's size, if it may start: at most `max_rollouts` rollouts, or `assume_yes`.

    Raises:
        ConfigError: the run is larger than `max_rollouts` and `assume_yes` is not set.
    """
    size = run_size(config, plan.tasks, plan.providers)
    if size.rollouts > config.max_rollouts and not assume_yes:
        raise ConfigError(f"{source}: this run would do up to {size.rollouts:,} rollouts, more than max_rollouts "
                          f"({config.max_rollouts:,}); pass --yes to start it anyway, or raise "
                          f"{config._flags.get('max_rollouts', 'field max_rollouts')}")
    return size


def _check_policy_options(config: ExperimentConfig, providers: list[RoleProvider]) -> None:
    """`cua_options` name policies of the run, and each policy accepts its options (built once from the class the
    providers hold, no call made)."""
    classes = {p.name: p.policy for p in providers if p.role == "cua"}
    for policy, options in config.cua_options.items():
        if policy not in config.cua_policies:
            raise ConfigError(f"options for {policy!r}, which is not among cua_policies {config.cua_policies}",
                              field="cua_options")
        try:
            get_policy(classes[policy], model=config.cua_model, models_path=str(config.models_config) if config.models_config else None,
                       **options)
        except (TypeError, ValueError) as exc:
            raise ConfigError(str(exc), field=f"cua_options.{policy}") from None


def _check_models(config: ExperimentConfig, players: list[RoleProvider]) -> dict[str, tuple[str, ModelConfig]]:
    """The model entries the run will call (by name), each with the field that named it, after checking each
    exists and can be configured."""
    # The roles the run uses that a model plays (a tasks file wins over any proposer); a name the registry does not
    # know is among them, and refused below naming its field.
    wanted = [(ROLE_FIELDS[p.role], p.name) for p in players if p.role != "cua" and not p.offline]
    # the CUA's model: `cua_model` if set, else the policy's own default (blamed on the policy that chose it)
    cua_field = "cua_model" if config.cua_model else "cua_policies"
    wanted += [(cua_field, model) for model in dict.fromkeys(p.model for p in players if p.role == "cua") if model]
    if not wanted:
        return {}

    try:
        registry = load_model_registry(config.models_config)
    except ModelConfigError as exc:
        raise ConfigError(str(exc), field="models_config") from None
    used: dict[str, tuple[str, ModelConfig]] = {}
    for field, name in wanted:
        try:
            model = registry.get(name)
        except LookupError:
            known = [*registry.names(), *(f"{role} (role)" for role in registry.roles)]
            raise ConfigError(f"unknown model {name!r} in {registry.source} "
                              f"(known: {', '.join(known)})", field=field) from None
        if model.is_offline:
            continue
        try:
            model.check_usable()  # an unset ${VAR} or an empty key: named now, not at the first call
        except ModelConfigError as exc:
            raise ConfigError(f"{exc} (in {registry.source})", field=field) from None
        used.setdefault(model.name, (field, model))
    return used


def _probe_endpoints(models: dict[str, tuple[str, ModelConfig]]) -> None:
    """Refuse the run when an endpoint does not accept a TCP connection (refused, unknown host, silent), naming
    the field (so the flag) that asked for its model."""
    targets: dict[tuple[str, int], tuple[str, str, str]] = {}
    for name, (field, model) in models.items():
        endpoint = model.endpoint()
        parts = urlsplit(endpoint)
        if not parts.hostname or _proxied(endpoint):
            continue  # a proxy carries the requests: it, not us, reaches the endpoint
        port = parts.port or (443 if parts.scheme == "https" else 80)
        targets.setdefault((parts.hostname, port), (name, endpoint, field))
    if not targets:
        return
    with ThreadPoolExecutor(max_workers=min(8, len(targets))) as pool:
        outcomes = list(pool.map(_connect, targets))
    for (name, endpoint, field), problem in zip(targets.values(), outcomes, strict=True):
        if problem:
            raise ConfigError(f"model {name!r}: endpoint {endpoint} is unreachable ({problem}); start its server, "
                              "fix its base_url in the model registry, or play the role offline", field=field)


def _connect(address: tuple[str, int]) -> str | None:
    host, port = address
    try:
        with socket.create_connection((host, port), timeout=PROBE_TIMEOUT_S):
            return None
    except socket.gaierror as exc:
        return f"cannot resolve host {host!r}: {exc.strerror or exc}"
    except TimeoutError:
        return f"no answer from {host}:{port} within {PROBE_TIMEOUT_S:g} s"
    except OSError as exc:
        return f"{exc.strerror or exc} at {host}:{port}"


def _proxied(url: str) -> bool:
    parts = urlsplit(url)
    return bool(urllib.request.getproxies().get(parts.scheme or "https")) and not urllib.request.proxy_bypass(parts.hostname or "")

