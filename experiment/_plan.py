"""What an experiment covers: its apps (those with a first version, for an offline coder started from
`--v0-dir`) and its tracks (coders × CUAs × revision modes × commenter modes)."""

from __future__ import annotations

import itertools
from pathlib import Path

from apps_prompts import load_apps
from results import Track

from ._config import ExperimentConfig
from ._offline_roles import offline_coders


def sweep_apps(config: ExperimentConfig) -> list[str]:
    """The app ids the sweep runs, in order.

    Raises:
        ValueError: an app id the apps file does not have, or (offline coder with `--v0-dir`) no first version.
    """
    specs = load_apps(config.apps).raise_for_errors()
    app_ids = config.app_ids or [s.id for s in specs]
    unknown = sorted(set(app_ids) - {s.id for s in specs})
    if unknown:
        raise ValueError(f"unknown app id(s) {unknown} in {config.apps}")
    if config.v0_dir is not None and offline_coders(config):
        app_ids = apps_with_v0(config, app_ids)
    return app_ids


def sweep_tracks(config: ExperimentConfig) -> list[Track]:
    """coders × CUAs × revision modes × commenter modes; the `unsupported` mode, which does not
    comment, once (commenter mode None)."""
    tracks = []
    for coder, cua, mode in itertools.product(config.coders, config.cua_policies, config.revision_modes):
        commenter_modes = [None] if mode == "unsupported" else config.commenter_modes
        tracks += [Track(coder=coder, cua=cua, mode=mode, commenter_mode=commenter) for commenter in commenter_modes]
    return tracks


def apps_with_v0(config: ExperimentConfig, app_ids: list[str]) -> list[str]:
    """The offline coder starts from `v0_dir/ID/index.html`: named apps must have one; with no
    names, the run covers the apps that do (a 12-app folder against 52 prompts).

    Raises:
        ValueError: a named app has no first version there, or none of the apps has one.
    """
    have = {path.parent.name for path in Path(config.v0_dir).glob("*/index.html")}
    if config.app_ids:
        missing = [app_id for app_id in app_ids if app_id not in have]
        if missing:
            raise ValueError(f"--v0-dir {config.v0_dir}: no {missing[0]}/index.html (missing for {len(missing)} app(s): {', '.join(missing[:5])})")
        return app_ids
    chosen = [app_id for app_id in app_ids if app_id in have]
    if not chosen:
        raise ValueError(f"--v0-dir {config.v0_dir}: none of the {len(app_ids)} apps in {config.apps} has an ID/index.html there")
    return chosen
