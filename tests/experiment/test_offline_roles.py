"""One rule says which roles ran on offline providers, for every role, by the registries (never by the name's spelling)."""

from __future__ import annotations

import yaml

from experiment import is_offline_provider, make_config, offline_roles, role_players
from results import Track

EVERY_OFFLINE = ["coder", "proposer", "verifier", "commenter", "judge", "cua (heuristic)"]


def runs_offline(config) -> bool:
    """Every role the run uses played offline (what `Plan.offline` says of a checked run)."""
    return all(player.offline for player in role_players(config))


def _models(tmp_path, **roles: str):
    """A registry with a model endpoint (`remote`), the usual `offline` entry and a second offline name (`rules`)."""
    path = tmp_path / "models.yaml"
    path.write_text(yaml.safe_dump({
        "roles": roles,
        "models": [{"name": "remote", "provider": "openai-compatible", "model": "m", "base_url": "http://127.0.0.1:9/v1"},
                   {"name": "offline", "provider": "offline"},
                   {"name": "rules", "provider": "offline", "description": "another name for no endpoint"}],
    }), encoding="utf-8")
    return str(path)


def test_the_default_run_is_offline_in_every_role_it_uses():
    config = make_config({})
    assert offline_roles(config) == EVERY_OFFLINE and runs_offline(config)
    track = Track(coder="offline", cua="heuristic", mode="integrated", commenter_mode="dashboard")
    assert offline_roles(config, track) == ["coder", "proposer", "verifier", "commenter", "judge", "cua"]


def test_a_second_model_name_the_registry_maps_to_the_offline_provider_counts_as_offline(tmp_path):
    models = _models(tmp_path, judge="rules", detector="rules")
    config = make_config({"models_config": models, "coders": ["rules"], "proposer": "rules", "verifier": "rules",
                          "commenter": "rules", "judge": "judge", "feedback": "+defects", "detector": "detector"})
    assert offline_roles(config) == ["coder", "proposer", "verifier", "commenter", "judge", "detector",
                                     "cua (heuristic)"]
    assert runs_offline(config)
    # the same spellings on a model endpoint are not offline, whatever the name says
    online = make_config({"models_config": models, "verifier": "remote", "judge": "remote"})
    assert offline_roles(online) == ["coder", "proposer", "commenter", "cua (heuristic)"] and not runs_offline(online)
    assert not is_offline_provider("verifier", "offline-looking-but-unknown", None)


def test_a_role_counts_only_where_the_run_uses_it(tmp_path):
    models = _models(tmp_path, translator="remote")
    plain = make_config({"models_config": models, "detector": "remote"})
    assert "detector" not in {p.role for p in role_players(plain)}  # no defects feedback: no detector
    assert "translator" not in {p.role for p in role_players(plain)}  # no variation translates
    german = make_config({"models_config": models, "variations": ["german"], "translator": "translator"})
    assert [p for p in role_players(german) if p.role == "translator"][0].offline is False
    assert "translator" not in offline_roles(german) and not runs_offline(german)
    defects_only = make_config({"feedback": "defects", "commenter": "remote", "models_config": models})
    assert "commenter" not in {p.role for p in role_players(defects_only)} and runs_offline(defects_only)
    unsupported = Track(coder="offline", cua="heuristic", mode="unsupported")
    assert "commenter" not in offline_roles(make_config({}), unsupported)  # this mode does not comment


def test_mixed_coders_and_agents_name_each_offline_one_and_a_tasks_file_is_an_offline_proposer(tmp_path):
    tasks = tmp_path / "tasks.yaml"
    tasks.write_text(yaml.safe_dump({"unit-converter": []}), encoding="utf-8")
    config = make_config({"models_config": _models(tmp_path), "coders": ["offline", "remote"], "proposer": "remote",
                          "tasks_file": str(tasks), "cua_policies": ["heuristic", "uitars"]})
    assert offline_roles(config) == ["coder (offline)", "proposer", "verifier", "commenter", "judge",
                                     "cua (heuristic)"]
    assert offline_roles(config, Track(coder="remote", cua="uitars", mode="cua", commenter_mode="dashboard")) == [
        "proposer", "verifier", "commenter", "judge"]
    assert not runs_offline(config)
