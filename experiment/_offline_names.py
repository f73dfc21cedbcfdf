"""Whether a name, playing a role, is an offline provider: the rule by name, below the run's config.

The config's own checks need it (a variation that translates needs a model), and so does every label
of offline roles (`offline_roles`, which applies it to a whole run). The answer comes from the
registries, never from a test on the name: the CUA policy's class, the role's own offline
implementations, or a model that the model registry maps to `provider: offline`.
"""

from __future__ import annotations

from pathlib import Path

from apps_prompts import OFFLINE_PROPOSERS
from coder import coders
from commenter import COMMENTERS
from commenter.detector import OFFLINE_DETECTORS
from cua.policies import is_offline_policy, policies
from llm import ModelConfigError, ModelRegistry, UnknownModelError, load_model_registry
from perturb import NO_TRANSLATOR
from verifier import OFFLINE
from verifier.judge import OFFLINE_JUDGE

ROLES = ("coder", "proposer", "verifier", "commenter", "judge", "detector", "translator", "cua")
"""Every role of the loop, in the order labels list them."""


def _own_offline_names(role: str) -> frozenset[str]:
    """The role's implementations that call no model, by the names its factory knows them by (read at each call:
    a registry may gain names after import)."""
    if role == "coder":
        return frozenset(coders.names())  # registered coders are not models (any other name is one)
    if role == "proposer":
        return frozenset(OFFLINE_PROPOSERS)
    if role == "verifier":
        return frozenset({OFFLINE})
    if role == "commenter":
        return frozenset(name for name in COMMENTERS.names() if getattr(COMMENTERS.get(name), "offline", False))
    if role == "judge":
        return frozenset({OFFLINE_JUDGE})
    if role == "detector":
        return frozenset(OFFLINE_DETECTORS)
    if role == "translator":
        return frozenset({NO_TRANSLATOR})  # nothing translates offline: the name says no model is asked
    raise ValueError(f"no role {role!r}; the roles are {', '.join(ROLES)}")


def is_offline_provider(role: str, name: str, registry: ModelRegistry | None = None) -> bool:
    """Whether `name`, playing `role`, is an offline provider (see the module's docstring).

    `registry`: the run's model registry (None: only the role's own offline implementations count). A name the
    registry does not know is not offline (the run's preflight refuses it before anything starts).
    """
    if role == "cua":
        return name in policies and is_offline_policy(name)
    if name in _own_offline_names(role):
        return True
    if registry is None:
        return False
    try:
        return registry.is_offline(name)
    except UnknownModelError:
        return False


def registry_at(models_config: str | Path | None) -> ModelRegistry | None:
    """The model registry at `models_config` (None when it cannot be read: only the roles' own offline names then count)."""
    try:
        return load_model_registry(models_config)
    except ModelConfigError:
        return None
