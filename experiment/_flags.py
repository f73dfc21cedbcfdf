"""The config's command line: every field a user sets declares its group (and its flag, if not named after it) once,
on the field (`Flag`); `aui run` and `aui sweep` are made from `config_flags`, and `command_config` makes the run's
config of what they were given."""

from __future__ import annotations

import types
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ._config import ConfigError, ExperimentConfig, Flag, make_config, read_config_file
from ._offline_roles import OFFLINE_PLAYERS, ROLE_FIELDS, is_offline_provider, registry_at


@dataclass(frozen=True)
class ConfigFlag:
    """One flag of `aui run` / `aui sweep`: the field it sets (a nested one dotted: `budget.max_cost_usd`), its group
    in `--help`, its help (the field's description) and its type: str, int, float, bool, Path or list (repeatable)."""

    field: str
    flag: str
    group: str
    help: str
    type: type


def config_flags() -> list[ConfigFlag]:
    """Every flag the config declares (each field marked with a `Flag`), in the order of its fields."""
    found = []
    for name, info in ExperimentConfig.model_fields.items():
        mark = next(item for item in info.metadata if isinstance(item, Flag))  # every field says whether it has one
        if mark.nested:  # a nested model's fields (the budget's limits), each flagged by its own name
            found += [ConfigFlag(f"{name}.{field}", _dashed(field), mark.group, f"The run's {name}: "
                                 f"{inner.description[:1].lower()}{inner.description[1:]}", _cli_type(inner.annotation))
                      for field, inner in _cli_type(info.annotation, bare=True).model_fields.items()
                      if _cli_type(inner.annotation) is not dict]
        elif mark.group is not None:
            found.append(ConfigFlag(name, mark.flag or _dashed(name), mark.group,
                                    _with_choices(info.description or "", info.annotation), _cli_type(info.annotation)))
    return found


def _with_choices(text: str, annotation: Any) -> str:
    """`text`, ending with the names a field of fixed choices (a Literal, or a list of one) takes: `(off | all)`."""
    annotation = _cli_type(annotation, bare=True)
    if typing.get_origin(annotation) is list:
        annotation = typing.get_args(annotation)[0]
    if typing.get_origin(annotation) is not typing.Literal:
        return text
    return f"{text} ({' | '.join(map(str, typing.get_args(annotation)))})"


def _dashed(field: str) -> str:
    return "--" + field.replace("_", "-")


def _cli_type(annotation: Any, bare: bool = False) -> Any:
    """What a flag of a field so annotated takes (`bare`: the annotation without its `| None`)."""
    if isinstance(annotation, types.UnionType) or typing.get_origin(annotation) is typing.Union:
        annotation = next(arg for arg in typing.get_args(annotation) if arg is not type(None))
    if bare or annotation in (bool, int, float, Path):
        return annotation
    return typing.get_origin(annotation) if typing.get_origin(annotation) in (list, dict) else str


def command_config(given: dict[str, Any], config_file: Path | None = None, offline: bool = False) -> ExperimentConfig:
    """The run's config: `config_file`'s settings (or the defaults), with the flags `given` (field → value, as
    `config_flags` names the fields) over them; `offline` plays every role with its own offline provider.

    Raises:
        ConfigError: a bad file or value (a value given by a flag is named by its flag), or `offline` together with
            a flag naming a role's model (both named).
    """
    data = read_config_file(config_file) if config_file is not None else {}
    flags = {spec.field: spec.flag for spec in config_flags() if spec.field in given}
    for field, value in given.items():
        head, _, sub = field.partition(".")
        data[head] = {**(data.get(head) or {}), sub: value} if sub else value
    if offline:
        _refuse_models(given, flags, registry_at(data.get("models_config")))
        for role, name in OFFLINE_PLAYERS.items():
            if ROLE_FIELDS[role] not in given:
                data[ROLE_FIELDS[role]] = [name] if role in ("coder", "cua") else name
    return make_config(data, source=str(config_file) if config_file is not None else "flags", flags=flags)


def _refuse_models(given: dict[str, Any], flags: dict[str, str], registry) -> None:
    """`--offline` with a flag naming a model for a role (`--cua-model` too) is a contradiction: refused, naming both."""
    for role, field in [*ROLE_FIELDS.items(), ("cua", "cua_model")]:
        names = given.get(field) or []
        for name in [names] if isinstance(names, str) else names:
            if not is_offline_provider(role, name, registry):
                raise ConfigError(f"--offline and {flags[field]} {name}: --offline plays every role with its offline "
                                  f"provider, and {name!r} is not the {role}'s; give one or the other")


__all__ = ["ConfigFlag", "command_config", "config_flags"]
