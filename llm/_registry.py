"""The model registry: named model entries plus the role map, loaded from YAML."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from ._config import ROLES, ModelConfig, ModelConfigError
from ._limits import check_reply_caps
from ._registry_base import UnknownNameError

PROJECT_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_MODELS_PATH = PROJECT_ROOT / "configs" / "models.yaml"
"""Used when no path is given and `$AUI_MODELS_CONFIG` is unset."""


class UnknownModelError(UnknownNameError, ModelConfigError):
    """A model name or role that the registry does not know; the message lists the known ones."""


class ModelRegistry:
    """Named model entries, the role map and the reply caps set per role. Immutable: `with_roles`
    returns a new registry.

    Everywhere a model is wanted, callers may pass either a role (`"coder"`) or a model name
    (`"gpt-5"`); role and model names may not collide, so this is never ambiguous.
    """

    def __init__(
        self,
        models: list[ModelConfig],
        roles: Mapping[str, str] | None = None,
        *,
        source: str | Path | None = None,
        reply_caps: Mapping[str, int] | None = None,
    ) -> None:
        """Build a registry from model entries, a role map (role → model name) and reply caps
        per role (role → bytes, `reply_caps:` in YAML; `llm.reply_cap` says which cap wins).

        Raises:
            ModelConfigError: duplicate model names, a role naming an unknown model, a role
                whose name is also a model name, or a reply cap that is not a positive whole
                number of bytes or names no role.
        """
        self.source = str(source) if source is not None else "<in-memory>"
        self._models: dict[str, ModelConfig] = {}
        for entry in models:
            if entry.name in self._models:
                raise ModelConfigError(f"{self.source}: model name {entry.name!r} is defined twice")
            self._models[entry.name] = entry
        self._roles = {role: self._role_target(role, target) for role, target in (roles or {}).items()}
        self._reply_caps = check_reply_caps(reply_caps, (*ROLES, *self._roles), self.source)

    @property
    def models(self) -> dict[str, ModelConfig]:
        """Model entries by name (a copy)."""
        return dict(self._models)

    @property
    def roles(self) -> dict[str, str]:
        """Role → model name (a copy)."""
        return dict(self._roles)

    @property
    def reply_caps(self) -> dict[str, int]:
        """Reply caps set per role, in bytes (a copy; roles not listed keep `llm.DEFAULT_REPLY_CAPS`)."""
        return dict(self._reply_caps)

    def names(self) -> list[str]:
        """Model names, in file order."""
        return list(self._models)

    def model_name(self, name_or_role: str) -> str:
        """The model name behind a role, or the name itself if it is a model name.

        Raises:
            UnknownModelError: neither a role nor a model name (lists both).
        """
        if name_or_role in self._roles:
            return self._roles[name_or_role]
        if name_or_role in self._models:
            return name_or_role
        known = [*self._models, *(f"{role} (role)" for role in self._roles)]
        raise UnknownModelError(f"model or role (in {self.source})", name_or_role, known)

    def get(self, name_or_role: str) -> ModelConfig:
        """The model entry for a role or model name.

        Raises:
            UnknownModelError: neither a role nor a model name (lists both).
        """
        return self._models[self.model_name(name_or_role)]

    def is_offline(self, name_or_role: str) -> bool:
        """True when the role or model has no endpoint and callers must use their offline path.

        Raises:
            UnknownModelError: neither a role nor a model name.
        """
        return self.get(name_or_role).is_offline

    def with_roles(self, overrides: Mapping[str, str]) -> ModelRegistry:
        """A copy whose role map has `overrides` applied, e.g. `{"coder": "offline"}` for one run.

        A value may be a model name or an existing role (`{"proposer": "coder"}`).

        Raises:
            ModelConfigError / UnknownModelError: a value names no model or role, or a role
                name collides with a model name.
        """
        roles = dict(self._roles)
        for role, target in overrides.items():
            roles[role] = self.model_name(target) if target in self._roles else target
        return ModelRegistry(list(self._models.values()), roles, source=self.source, reply_caps=self._reply_caps)

    def with_models(self, *models: ModelConfig) -> ModelRegistry:
        """A copy with `models` added, replacing entries of the same name (handy in tests)."""
        merged = {**self._models, **{m.name: m for m in models}}
        return ModelRegistry(list(merged.values()), self._roles, source=self.source, reply_caps=self._reply_caps)

    @classmethod
    def from_dict(cls, data: Any, *, source: str | Path = "<dict>") -> ModelRegistry:
        """Build from the parsed YAML structure `{"models": [...], "roles": {...}, "reply_caps": {...}}`
        (`reply_caps` optional).

        Raises:
            ModelConfigError: the structure is wrong; the message names `source` and the field.
        """
        if not isinstance(data, Mapping):
            raise ModelConfigError(f"{source}: expected a mapping with 'models' and 'roles', got {type(data).__name__}")
        unknown = sorted(set(data) - {"models", "roles", "reply_caps"})
        if unknown:
            raise ModelConfigError(f"{source}: unknown top-level key(s) {unknown}; expected 'models', 'roles' "
                                   "and optionally 'reply_caps'")
        raw_models = data.get("models")
        if not isinstance(raw_models, list) or not raw_models:
            raise ModelConfigError(f"{source}: 'models' must be a non-empty list of model entries")
        models = [_parse_entry(entry, index, source) for index, entry in enumerate(raw_models)]
        roles = data.get("roles") or {}
        if not isinstance(roles, Mapping) or not all(isinstance(v, str) for v in roles.values()):
            raise ModelConfigError(f"{source}: 'roles' must map role names to model names, e.g. coder: gpt-5")
        return cls(models, {str(k): v for k, v in roles.items()}, source=source, reply_caps=data.get("reply_caps"))

    def __repr__(self) -> str:
        caps = f", reply_caps={self._reply_caps}" if self._reply_caps else ""
        return f"ModelRegistry(source={self.source!r}, models={self.names()}, roles={self._roles}{caps})"

    def _role_target(self, role: str, target: str) -> str:
        if role in self._models:
            raise ModelConfigError(
                f"{self.source}: role {role!r} has the same name as a model; rename one so lookups are unambiguous"
            )
        if target not in self._models:
            raise UnknownModelError(f"model (for role {role!r} in {self.source})", target, list(self._models))
        return target


def load_model_registry(path: str | Path | None = None) -> ModelRegistry:
    """Load `configs/models.yaml` (or `path`, or `$AUI_MODELS_CONFIG`).

    Loading never reads the `${ENV}` variables the entries mention: a missing key only fails when
    a client for that model is created.

    Raises:
        ModelConfigError: the file is missing, is not valid YAML, or an entry is malformed; the
            message names the file and the field.
    """
    path = Path(path or os.environ.get("AUI_MODELS_CONFIG") or DEFAULT_MODELS_PATH)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise ModelConfigError(f"{path}: cannot read model config ({error.strerror or error})") from error
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as error:
        raise ModelConfigError(f"{path}: not valid YAML: {error}") from error
    return ModelRegistry.from_dict(data, source=path)


def _parse_entry(entry: Any, index: int, source: str | Path) -> ModelConfig:
    label = f"models[{index}]"
    if not isinstance(entry, Mapping):
        raise ModelConfigError(f"{source}: {label} must be a mapping with name, provider, model, ...")
    if isinstance(entry.get("name"), str):
        label += f" ({entry['name']})"
    try:
        return ModelConfig.model_validate(dict(entry))
    except ValidationError as error:
        problems = "; ".join(
            f"field {'.'.join(str(p) for p in e['loc']) or '(entry)'!r}: {e['msg']}" for e in error.errors()
        )
        raise ModelConfigError(f"{source}: {label}: {problems}") from None
