"""Who plays each role of a run (`resolve_roles`: each name resolved once, by `_offline_roles`' rule), which of them a
run or one of its tracks uses, and how every output labels those played by offline providers."""

from __future__ import annotations

from collections.abc import Iterable

from llm import RoleProvider
from perturb import needed_roles
from results import Track

from ._config import ExperimentConfig
from ._offline_roles import ROLE_FIELDS, ROLES, provider_of, registry_at


def plays(provider: RoleProvider, track: Track) -> bool:
    """Whether `provider` plays its role in `track` (its own coder and CUA; no commenter or detector in the
    `unsupported` mode)."""
    if provider.role in ("coder", "cua"):
        return provider.name == getattr(track, provider.role)
    return provider.used and not (provider.role in ("commenter", "detector") and track.mode == "unsupported")


def resolve_roles(config: ExperimentConfig, strict: bool = False) -> list[RoleProvider]:
    """Every role's provider (one per coder and per CUA policy), in `ROLES` order, each name looked up once
    (`provider_of`) in the run's model registry (`config.models_config`).

    Raises:
        UnknownNameError: (`strict`) a CUA policy no registry knows.
    """
    registry = registry_at(config.models_config)
    used = {"commenter": "commenter" in config.feedback, "detector": "defects" in config.feedback,
            "translator": any("translator" in needed_roles(name) for name in config.variations)}
    players = {role: getattr(config, ROLE_FIELDS[role]) for role in ROLES}
    return [provider_of(role, name, registry, cua_model=config.cua_model, tasks_file=config.tasks_file is not None,
                        used=used.get(role, True), strict=strict)
            for role, names in players.items() for name in dict.fromkeys(names if isinstance(names, list) else [names])]


def role_players(config: ExperimentConfig, track: Track | None = None) -> list[RoleProvider]:
    """Every role the run (or one `track` of it) uses and who plays it, in `ROLES` order."""
    return players_of(resolve_roles(config), track)


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


def offline_roles(config: ExperimentConfig, track: Track | None = None) -> list[str]:
    """The roles played by offline providers (`offline_labels` of the run's, or `track`'s, players)."""
    return offline_labels(role_players(config, track), track)
