"""Policies by name: `get_policy("uitars", model=...)`, `"openai-cua"`, `"heuristic"`, `"scripted"`.

Each provider is imported only when chosen, so the offline policies never load a model SDK.
A new policy is one module and one `POLICIES.register_lazy(...)` line.
"""

from __future__ import annotations

from typing import Any

from llm import Registry

from .._policy import Policy
from ._uitars_prompts import task_of_request as uitars_task_of_request

POLICIES: Registry[type[Policy]] = Registry("policy")
POLICIES.register_lazy("uitars", "cua.policies._uitars:UITarsPolicy")
POLICIES.register_lazy("openai-cua", "cua.policies._openai_cua:OpenAIComputerUsePolicy")
POLICIES.register_lazy("heuristic", "cua.policies.heuristic:HeuristicPolicy")
POLICIES.register_lazy("scripted", "cua.policies._scripted:ScriptedPolicy")


def get_policy(
    name: str | type[Policy],
    *,
    model: str | None = None,
    client: Any = None,
    models_path: str | None = None,
    **options: Any,
) -> Policy:
    """A new instance of the policy registered as `name` (one instance per rollout; the rollout closes it), or of
    the policy class `name` itself where the caller holds it already (a run's plan looked the name up once).

    The one way to build a policy, for the CLI, the sweep and the benchmarks alike. A policy whose
    class declares `offline` needs no model: `model`, `client` and `models_path` are not passed to
    it. A model policy gets the model (a registry name or role; its own default role when None)
    and its client: `client` if given, else the process-wide one for `models_path`.

    Raises:
        UnknownNameError: no such policy (the message lists the known names).
        ImportError: the policy's module (or an optional package it needs) could not be imported.
        TypeError / ValueError: `options` do not fit the policy.
        ModelConfigError / UnknownModelError: the model registry or the model cannot be found.
    """
    policy_class = name if isinstance(name, type) else POLICIES.get(name)
    if policy_class.offline:
        return policy_class(**options)
    model_options = {"model": model, "client": client, "models_path": models_path}
    return policy_class(**{key: value for key, value in model_options.items() if value is not None}, **options)


def is_offline_policy(name: str) -> bool:
    """Whether the policy registered as `name` runs without a model (its class's `offline` flag).

    Raises:
        UnknownNameError: no such policy.
    """
    return bool(POLICIES.get(name).offline)


def policy_model(name: str, model: str | None = None) -> str | None:
    """The registry model (or role) the policy `name` will call: None for an offline policy, else
    `model` or the policy's own default (`cua` for uitars, `openai-cua` for openai-cua)."""
    policy_class = POLICIES.get(name)
    return None if policy_class.offline else (model or policy_class.default_model)


__all__ = [
    "POLICIES",
    "get_policy",
    "is_offline_policy",
    "policy_model",
    "uitars_task_of_request",
]
