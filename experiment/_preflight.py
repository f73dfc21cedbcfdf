"""Checks a config before a sweep starts, so bad input fails in seconds with one line naming it.

Everything here is something the sweep would otherwise find only deep inside a flow — after the
Prefect server started, after a stage's retries, with a traceback: a malformed app spec, an
unknown app id, a `--v0-dir` without one of the apps, a tasks file with a duplicate id, a model
or CUA policy no registry knows, a model whose key variable is unset, an endpoint nobody answers.
"""

from __future__ import annotations

import socket
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from apps_prompts import TasksFileError, load_apps, load_tasks_file
from cua.policies import get_policy, policies, policy_model
from llm import ModelConfigError, load_model_registry

from ._config import ConfigError, ExperimentConfig
from ._offline_names import is_offline_provider
from ._offline_roles import offline_coders, role_players, run_registry
from ._plan import apps_with_v0
from ._run_size import run_size, tasks_per_app

if TYPE_CHECKING:
    from llm import ModelConfig

PROBE_TIMEOUT_S = 3.0
"""How long an endpoint may take to accept a TCP connection before the run is refused."""


def check_config(config: ExperimentConfig, *, source: str = "config", probe_endpoints: bool = True) -> list[str]:
    """The app ids the sweep will run, once every input it names is usable.

    `source` (the config file, or "flags") starts the message. With `probe_endpoints`, every
    endpoint the run will call must accept a TCP connection within `PROBE_TIMEOUT_S`.

    Raises:
        ConfigError: the first problem found, in one line naming the file, field or value.
    """
    try:
        app_ids = _check_apps(config)
        _check_tasks_file(config, app_ids)
        _check_task_counts(config, app_ids)
        _check_judge_checks(config, app_ids)
        _check_policies(config)
        models = _check_models(config)
        _check_policy_options(config)
        if probe_endpoints and models:
            _probe_endpoints(models)
    except ConfigError as exc:
        raise ConfigError(f"{source}: {exc}") from None
    return app_ids


def _check_apps(config: ExperimentConfig) -> list[str]:
    try:
        loaded = load_apps(config.apps)
    except FileNotFoundError as exc:
        raise ConfigError(f"field 'apps': {exc}") from None
    if loaded.errors:
        more = len(loaded.errors) - 1
        tail = f" (and {more} more problem(s): run `aui apps validate {config.apps}`)" if more else ""
        raise ConfigError(f"app spec {loaded.errors[0]}{tail}")
    known = [spec.id for spec in loaded.apps]
    unknown = [app_id for app_id in config.app_ids if app_id not in known]
    if unknown:
        raise ConfigError(f"field 'app_ids': unknown app id(s) {', '.join(map(repr, unknown))} in {config.apps} "
                          f"(known: {', '.join(known[:12])}{', ...' if len(known) > 12 else ''})")
    app_ids = list(config.app_ids) or known
    if config.v0_dir is not None and offline_coders(config):
        try:
            app_ids = apps_with_v0(config, app_ids)
        except ValueError as exc:
            raise ConfigError(str(exc)) from None
    return app_ids


def _check_tasks_file(config: ExperimentConfig, app_ids: list[str]) -> None:
    if config.tasks_file is None:
        return

    for app_id in app_ids:
        try:
            load_tasks_file(config.tasks_file, app_id)
        except TasksFileError as exc:
            raise ConfigError(f"field 'tasks_file': {exc}") from None


def _check_task_counts(config: ExperimentConfig, app_ids: list[str]) -> None:
    for app_id, count in tasks_per_app(config, app_ids).items():
        if count > config.max_tasks_per_app:
            where = f"in {config.tasks_file}" if config.tasks_file else "(field 'tasks_per_app')"
            raise ConfigError(f"app {app_id!r} would have {count:,} tasks {where}; at most {config.max_tasks_per_app} "
                              f"per app (raise field 'max_tasks_per_app' to allow more)")


def _check_judge_checks(config: ExperimentConfig, app_ids: list[str]) -> None:
    """A `flow` check reads the dashboard: only a model judge can; offline it is refused now, not after the rollouts."""
    registry = run_registry(config)
    if not is_offline_provider("judge", config.judge, registry) or (
            config.tasks_file is None and not is_offline_provider("proposer", config.proposer, registry)):
        return  # a model judges, or a model proposes the tasks (their checks are not known yet)

    specs = {spec.id: spec for spec in load_apps(config.apps).apps}
    for app_id in app_ids:
        tasks = load_tasks_file(config.tasks_file, app_id) if config.tasks_file is not None else specs[app_id].tasks
        for task in tasks:
            if any(check.kind == "flow" for check in task.checks):
                raise ConfigError(f"task {task.id!r} of app {app_id!r} has a flow check, which needs a model judge "
                                  f"(field 'judge': a model name or role, e.g. judge); the offline judge reads the final "
                                  f"page's text only and cannot judge a flow")


def size_of_run(config: ExperimentConfig, app_ids: list[str]):
    """The run's size (`RunSize`); call after `check_config`."""
    return run_size(config, tasks_per_app(config, app_ids))


def check_run_size(config: ExperimentConfig, app_ids: list[str], *, assume_yes: bool, source: str = "config"):
    """The run's size, if it may start: at most `max_rollouts` rollouts, or `assume_yes`.

    Raises:
        ConfigError: the run is larger than `max_rollouts` and `assume_yes` is not set.
    """
    size = size_of_run(config, app_ids)
    if size.rollouts > config.max_rollouts and not assume_yes:
        raise ConfigError(f"{source}: this run would do up to {size.rollouts:,} rollouts, more than max_rollouts "
                          f"({config.max_rollouts:,}); pass --yes to start it anyway, or raise field 'max_rollouts'")
    return size


def _check_policies(config: ExperimentConfig) -> None:
    for policy in config.cua_policies:
        if policy not in policies:
            raise ConfigError(f"field 'cua_policies': unknown CUA policy {policy!r}; "
                              f"known: {', '.join(policies.names())}")


def _check_policy_options(config: ExperimentConfig) -> None:
    """`cua_options` name policies of the run, and each policy accepts its options (built once, no call made)."""
    for policy, options in config.cua_options.items():
        if policy not in config.cua_policies:
            raise ConfigError(f"field 'cua_options': options for {policy!r}, which is not among cua_policies "
                              f"{config.cua_policies}")
        try:
            get_policy(policy, model=config.cua_model, models_path=str(config.models_config) if config.models_config else None,
                       **options)
        except (TypeError, ValueError) as exc:
            raise ConfigError(f"field 'cua_options.{policy}': {exc}") from None


_FIELD_OF_ROLE = {"coder": "coders", "proposer": "proposer", "verifier": "verifier", "commenter": "commenter",
                  "judge": "judge", "detector": "detector", "translator": "translator"}


def _check_models(config: ExperimentConfig) -> dict[str, ModelConfig]:
    """The model entries the run will call (by name), after checking each exists and can be configured."""
    # The roles the run uses that a model plays (a tasks file wins over any proposer); a name the registry does not
    # know is among them, and refused below naming its field.
    wanted: list[tuple[str, str]] = [(_FIELD_OF_ROLE[player.role], player.name) for player in role_players(config)
                                     if player.role != "cua" and not player.offline]

    wanted += [("cua_model", model) for model in dict.fromkeys(policy_model(p, config.cua_model) for p in config.cua_policies) if model]
    if not wanted:
        return {}

    try:
        registry = load_model_registry(config.models_config)
    except ModelConfigError as exc:
        raise ConfigError(f"field 'models_config': {exc}") from None
    used: dict[str, ModelConfig] = {}
    for field, name in wanted:
        try:
            model = registry.get(name)
        except LookupError:
            known = [*registry.names(), *(f"{role} (role)" for role in registry.roles)]
            raise ConfigError(f"field '{field}': unknown model {name!r} in {registry.source} "
                              f"(known: {', '.join(known)})") from None
        if model.is_offline:
            continue
        try:
            for part in ("base_url", "api_key", "api_version", "deployment"):
                model.resolved(part)  # an unset ${VAR}: named now, not at the first call
            if model.provider in ("openai", "azure") and not model.resolved("api_key"):
                raise ModelConfigError(f"model {model.name!r} field 'api_key' is empty")
        except ModelConfigError as exc:
            raise ConfigError(f"field '{field}': {exc} (in {registry.source})") from None
        used[model.name] = model
    return used


def _probe_endpoints(models: dict[str, ModelConfig]) -> None:
    """Refuse the run when an endpoint does not accept a TCP connection (refused, unknown host, silent)."""
    targets: dict[tuple[str, int], tuple[str, str]] = {}
    for name, model in models.items():
        endpoint = model.endpoint()
        parts = urlsplit(endpoint)
        if not parts.hostname or _proxied(endpoint):
            continue  # a proxy carries the requests: it, not us, reaches the endpoint
        port = parts.port or (443 if parts.scheme == "https" else 80)
        targets.setdefault((parts.hostname, port), (name, endpoint))
    if not targets:
        return
    with ThreadPoolExecutor(max_workers=min(8, len(targets))) as pool:
        outcomes = list(pool.map(_connect, targets))
    for (name, endpoint), problem in zip(targets.values(), outcomes, strict=True):
        if problem:
            raise ConfigError(f"model {name!r}: endpoint {endpoint} is unreachable ({problem}); "
                              "start its server or fix its base_url in the model registry")


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


__all__ = ["PROBE_TIMEOUT_S", "check_config"]
