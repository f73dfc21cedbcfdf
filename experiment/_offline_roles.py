"""Which names play a role as offline providers — the one rule behind every label — and each name's provider,
resolved once (`provider_of`; `_players` applies it to a run).

The console, results (.json/.md), the report, the manifest and the viewer all say which roles ran on
offline providers, and the config's own checks need it too (a variation that translates needs a model);
they all get the answer from here (`is_offline_provider`: the rule by name), and here it comes from the
registries, never from a test on the name:

- the CUA: the policy's class says whether it calls a model (`cua.policies.is_offline_policy`);
- every other role: the name is one of the role's own offline implementations (the `coder` registry's
  coders, the `offline` proposer / verifier / commenter / judge, the detectors that call no model),
  or a model name or role that the model registry maps to `provider: offline` — the same names the
  role's factory turns into its offline path (`get_coder`, `get_commenter`, `get_judge`, …);
- a proposer with a tasks file: the file gives the tasks, no model is called.

A role counts only where the run uses it: the commenter when its feedback is asked for, the detector
with `feedback: [.., defects]`, the translator when a variation translates the app. The judge is always
listed: it judges the tasks whose checks need it (`final_screenshot`, `flow`), which a run may pick up
from its task list at any round.
"""

from __future__ import annotations

from pathlib import Path

from apps_prompts import OFFLINE_PROPOSERS
from coder import CODERS
from commenter import COMMENTERS
from commenter.detector import OFFLINE_DETECTORS
from cua.policies import POLICIES, is_offline_policy
from llm import ModelConfigError, ModelRegistry, RoleProvider, UnknownModelError, load_model_registry
from perturb import NO_TRANSLATOR
from verifier import OFFLINE
from verifier.judge import OFFLINE_JUDGE

ROLES = ("coder", "proposer", "verifier", "commenter", "judge", "detector", "translator", "cua")
"""Every role of the loop, in the order labels list them."""
ROLE_FIELDS = {**{role: role for role in ROLES}, "coder": "coders", "cua": "cua_policies"}
"""The `ExperimentConfig` field naming each role's player(s) (a list for the coder and the CUA)."""
OFFLINE_PLAYERS = {"coder": "offline", "proposer": OFFLINE_PROPOSERS[0], "verifier": OFFLINE, "commenter": "offline",
                   "judge": OFFLINE_JUDGE, "detector": OFFLINE_DETECTORS[0], "translator": NO_TRANSLATOR, "cua": "heuristic"}
"""Each role's own offline provider: what `--offline` (and a config's defaults) name."""


def _own_offline_names(role: str) -> frozenset[str]:
    """The role's implementations that call no model, by the names its factory knows them by (read at each call:
    a registry may gain names after import). Registered coders are not models (any other name is one); nothing
    translates offline: the translator's name says no model is asked."""
    if role not in ROLES or role == "cua":
        raise ValueError(f"no role {role!r} with offline names; the roles are {', '.join(ROLES)}")
    return frozenset({"coder": CODERS.names(), "proposer": OFFLINE_PROPOSERS, "verifier": [OFFLINE],
                      "commenter": [name for name in COMMENTERS.names() if getattr(COMMENTERS.get(name), "offline", False)],
                      "judge": [OFFLINE_JUDGE], "detector": OFFLINE_DETECTORS, "translator": [NO_TRANSLATOR]}[role])


def is_offline_provider(role: str, name: str, registry: ModelRegistry | None = None) -> bool:
    """Whether `name`, playing `role`, is an offline provider (see the module's docstring).

    `registry`: the run's model registry (None: only the role's own offline implementations count). A name the
    registry does not know is not offline (the run's preflight refuses it before anything starts).
    """
    if role == "cua":
        return name in POLICIES and is_offline_policy(name)
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


def provider_of(role: str, name: str, registry: ModelRegistry | None = None, *, cua_model: str | None = None,
                tasks_file: bool = False, used: bool = True, strict: bool = False) -> RoleProvider:
    """Who `name` is, playing `role`: offline or not (the rule above), and the registry model it calls through.
    A CUA policy's name is looked up once (its class says whether it calls a model, and which by default);
    `cua_model`: the run's model for model policies; `tasks_file`: the proposer's tasks come from a file.

    Raises:
        UnknownNameError: (`strict`) a CUA policy no registry knows; else it counts as a policy that calls no model
            and is not offline.
    """
    if role == "cua":
        try:
            policy = POLICIES.get(name)  # the policy name's one look-up
        except LookupError:
            if strict:
                raise
            policy = None
        offline = bool(policy is not None and policy.offline)
        model = None if policy is None or offline else (cua_model or policy.default_model)
        return RoleProvider(role=role, name=name, offline=offline, model=model, used=used, policy=policy)
    own = is_offline_provider(role, name)  # the role's own offline implementation: no registry asked
    offline = own or is_offline_provider(role, name, registry) or (role == "proposer" and tasks_file)
    known = registry is not None and (name in registry.names() or name in registry.roles)
    return RoleProvider(role=role, name=name, offline=offline, model=name if known and not own else None, used=used)
