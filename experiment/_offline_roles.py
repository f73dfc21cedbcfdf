"""Which roles a run uses, who plays each, and which of them are offline providers: the one rule behind every label.

The console, results (.json/.md), the report, the manifest and the viewer all say which roles ran on
offline providers; they all get the answer from here, and here it comes from the registries, never
from a test on the name:

- the CUA: the policy's class says whether it calls a model (`cua.policies.is_offline_policy`);
- every other role: the name is one of the role's own offline implementations (the `coder` registry's
  coders, the `offline` proposer / verifier / commenter / judge, the detectors that call no model),
  or a model name or role that the model registry maps to `provider: offline` — the same names the
  role's factory turns into its offline path (`get_coder`, `get_commenter`, `make_judge`, …);
- a proposer with a tasks file: the file gives the tasks, no model is called.

A role counts only where the run uses it: the commenter when its feedback is asked for, the detector
with `feedback: [.., defects]`, the translator when a variation translates the app. The judge is always
listed: it judges the tasks whose checks need it (`final_screenshot`, `flow`), which a run may pick up
from its task list at any round.
"""

from __future__ import annotations

from dataclasses import dataclass

from llm import ModelRegistry
from perturb import needed_roles
from results import Track

from ._config import ExperimentConfig
from ._offline_names import ROLES, is_offline_provider, registry_at


@dataclass(frozen=True)
class RolePlayer:
    """One role the run uses and who plays it."""

    role: str
    name: str
    """The name the config gives (a model name or role, a policy, or the role's own offline implementation)."""
    offline: bool


def run_registry(config: ExperimentConfig) -> ModelRegistry | None:
    """The run's model registry (None when it cannot be read: only the roles' own offline names then count)."""
    return registry_at(config.models_config)


def role_players(config: ExperimentConfig, track: Track | None = None,
                 registry: ModelRegistry | None = None) -> list[RolePlayer]:
    """Every role the run (or one `track` of it) uses, who plays it and whether offline, in `ROLES` order.

    A run with several coders or CUA policies lists one player per name; a track, its own.
    `registry`: the model registry to ask (default: the run's, `config.models_config`).
    """
    registry = registry if registry is not None else run_registry(config)
    wanted: list[tuple[str, str]] = [("coder", name) for name in ([track.coder] if track else config.coders)]
    wanted.append(("proposer", config.proposer))
    wanted.append(("verifier", config.verifier))
    comments = "commenter" in config.feedback and (track is None or track.mode != "unsupported")
    if comments:
        wanted.append(("commenter", config.commenter))
    wanted.append(("judge", config.judge))
    if "defects" in config.feedback and (track is None or track.mode != "unsupported"):
        wanted.append(("detector", config.detector))
    if any("translator" in needed_roles(name) for name in config.variations):
        wanted.append(("translator", config.translator))
    wanted += [("cua", name) for name in ([track.cua] if track else config.cua_policies)]
    players = []
    for role, name in dict.fromkeys(wanted):
        offline = (role == "proposer" and config.tasks_file is not None) or is_offline_provider(role, name, registry)
        players.append(RolePlayer(role=role, name=name, offline=offline))
    return players


def offline_roles(config: ExperimentConfig, track: Track | None = None,
                  registry: ModelRegistry | None = None) -> list[str]:
    """The roles played by offline providers, as every output labels them.

    For one track: the role names (`["coder", "verifier", …, "cua"]`). For the run: the same, except
    that the CUA names its policy (`cua (heuristic)`), and so does a coder when some coders of the
    run are offline and others not (`coder (offline)`).
    """
    players = role_players(config, track, registry)
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


def offline_coders(config: ExperimentConfig) -> list[str]:
    """The run's coders that are offline providers (they start from `v0_dir` when the config gives one)."""
    return [player.name for player in role_players(config) if player.role == "coder" and player.offline]


def runs_offline(config: ExperimentConfig, registry: ModelRegistry | None = None) -> bool:
    """Whether every role the run uses is played by an offline provider (no model endpoint is called)."""
    return all(player.offline for player in role_players(config, registry=registry))
