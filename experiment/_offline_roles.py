"""Which names play a role as offline providers — the one rule behind every label — and who plays each role of a
run (`resolve_roles`: each name resolved once, `provider_of`), which of them a run or one of its tracks uses, and how
every output labels those played by offline providers.

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

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from apps_prompts import OFFLINE_PROPOSERS
from coder import CODERS
from commenter import COMMENTERS
from commenter.detector import OFFLINE_DETECTORS
from cua.policies import POLICIES, is_offline_policy
from llm import ModelConfigError, ModelRegistry, RoleProvider, UnknownModelError, load_model_registry
from perturb import NO_TRANSLATOR, needed_roles
from results import Track
from verifier import OFFLINE
from verifier.judge import OFFLINE_JUDGE

if TYPE_CHECKING:
    from ._config import ExperimentConfig

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


def plays(provider: RoleProvider, track: Track) -> bool:
    """Whether `provider` plays its role in `track` (its own coder and CUA; no commenter or detector in the
    `unsupported` mode)."""
    if provider.role in ("coder", "cua"):
        return provider.name == getattr(track, provider.role)
    return provider.used and not (provider.role in ("commenter", "detector") and track.mode == "unsupported")


def resolve_roles(config: ExperimentConfig, registry: ModelRegistry | None = None,
                  strict: bool = False) -> list[RoleProvider]:
    """Every role's provider (one per coder and per CUA policy), in `ROLES` order, each name looked up once
    (`provider_of`).

    `registry`: the model registry to ask (default: the run's, `config.models_config`).

    Raises:
        UnknownNameError: (`strict`) a CUA policy no registry knows.
    """
    registry = registry if registry is not None else registry_at(config.models_config)
    used = {"commenter": "commenter" in config.feedback, "detector": "defects" in config.feedback,
            "translator": any("translator" in needed_roles(name) for name in config.variations)}
    providers = []
    for role in ROLES:
        names = getattr(config, ROLE_FIELDS[role])
        for name in dict.fromkeys(names if isinstance(names, list) else [names]):
            providers.append(provider_of(role, name, registry, cua_model=config.cua_model,
                                         tasks_file=config.tasks_file is not None, used=used.get(role, True),
                                         strict=strict))
    return providers


def role_players(config: ExperimentConfig, track: Track | None = None,
                 registry: ModelRegistry | None = None) -> list[RoleProvider]:
    """Every role the run (or one `track` of it) uses and who plays it, in `ROLES` order."""
    return players_of(resolve_roles(config, registry), track)


def players_of(providers: Iterable[RoleProvider], track: Track | None = None) -> list[RoleProvider]:
    """The providers the run (or one `track` of it) uses."""
    return [p for p in providers if (plays(p, track) if track is not None else p.used)]


def offline_labels(players: list[RoleProvider], track: Track | None = None) -> list[str]:
    """The roles played by offline providers, as every output labels them.

    For one track: the role names (`["coder", "verifier", …, "cua"]`). For the run: the same, except
    that the CUA names its policy (`cua (heuristic)`), and so does a coder when some coders of the
    run are offline and others not (`coder (offline)`).
    """
    labels = []
    for role in ROLES:
        mine = [player for player in players if player.role == role]
        offline = [player for player in mine if player.offline]
        if not offline:
            continue
        if track is None and (role == "cua" or len(offline) < len(mine)):
            labels += [f"{role} ({player.name})" for player in offline]
        else:
            labels.append(role)
    return labels


def offline_roles(config: ExperimentConfig, track: Track | None = None,
                  registry: ModelRegistry | None = None) -> list[str]:
    """The roles played by offline providers (`offline_labels` of the run's, or `track`'s, players)."""
    return offline_labels(role_players(config, track, registry), track)
