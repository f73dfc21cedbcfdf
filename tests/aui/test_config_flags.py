"""`aui run` and `aui sweep` are made from the config: each field's flag is declared once, on the field; both
commands take the same flags; every role can be named; `--offline` with a role's model is refused naming both."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer
import yaml
from typer.testing import CliRunner

from aui import _run
from aui import app as cli
from experiment import GROUPS, ROLES, ExperimentConfig, Flag, check_config, check_run_size, command_config, config_flags, make_config
from tests.benchmark_sources import closed_port

APP = "unit-converter"
EXAMPLE = str(Path(__file__).resolve().parents[2] / "configs" / "sweep.example.yaml")
ROLE_FLAGS = {"coder": "--coder", "proposer": "--proposer", "verifier": "--verifier", "commenter": "--commenter",
              "judge": "--judge", "detector": "--detector", "translator": "--translator", "cua": "--cua"}


def _options(*command: str) -> dict[str, str]:
    """The command's options (`"run"`, or `"apps", "fetch"`): flag → the parameter it fills."""
    click_command = typer.main.get_command(cli)
    for name in command:
        click_command = click_command.commands[name]
    return {flag: param.name for param in click_command.params for flag in (*param.opts, *param.secondary_opts)
            if flag.startswith("-")}


def _configs(monkeypatch, *argv: str) -> list[ExperimentConfig]:
    seen: list[ExperimentConfig] = []
    monkeypatch.setattr(_run, "_execute", lambda config, *args, **kwargs: seen.append(config))
    result = CliRunner().invoke(cli, list(argv))
    assert result.exit_code == 0, result.output
    return seen


def test_every_config_field_a_user_sets_has_exactly_one_flag_and_the_rest_are_file_only():
    flags = config_flags()
    assert len({spec.flag for spec in flags}) == len(flags)  # no flag twice
    for name, info in ExperimentConfig.model_fields.items():
        mine = [spec for spec in flags if spec.field.split(".")[0] == name]
        [mark] = [item for item in info.metadata if isinstance(item, Flag)]  # every field says whether it has a flag
        if mark.group is None:
            assert not mine and "dict" in str(info.annotation), name  # a mapping: set in a file
        elif name == "budget":
            assert {spec.field for spec in mine} == {"budget.max_model_calls", "budget.max_cost_usd"}
        else:
            assert len(mine) == 1 and mine[0].help, name
    assert {spec.group for spec in flags} == set(GROUPS)


def test_run_and_sweep_take_the_same_flags():
    run, sweep = _options("run"), _options("sweep")
    assert run.pop("--config") == "config_file" and run.pop("-c") == "config_file"
    assert run == sweep
    assert {spec.flag for spec in config_flags()} <= set(run)
    assert {"--offline", "--yes", "--verbose", *ROLE_FLAGS.values(), "--cua-model"} <= set(run)


def test_a_flag_given_to_sweep_overrides_the_file_as_run_config_does_budgets_included(monkeypatch):
    for argv in (["sweep", EXAMPLE], ["run", "--config", EXAMPLE]):
        [config] = _configs(monkeypatch, *argv, "--rounds", "1", "--max-cost-usd", "2.5", "--variations", "dark,long")
        assert (config.name, config.rounds, config.budget.max_cost_usd) == ("example-sweep", 1, 2.5)
        assert config.variations == ["default", "dark", "long"]


def test_a_bad_budget_flag_is_one_error_line_naming_the_flag():
    result = CliRunner().invoke(cli, ["sweep", EXAMPLE, "--max-model-calls", "-1"])
    assert result.exit_code == 2
    assert "error: --max-model-calls:" in result.output and "-1" in result.output


def test_each_role_flag_reaches_the_plan(monkeypatch, tmp_path):
    models = tmp_path / "models.yaml"
    names = [f"m-{role}" for role in ROLES]
    models.write_text(yaml.safe_dump({"models": [{"name": name, "provider": "openai-compatible", "model": name,
                                                  "base_url": "http://127.0.0.1:9/v1"} for name in names]}))
    # every role played: the detector finds the defects of `+defects`, the translator translates `german`
    argv = ["run", "--app", APP, "--models", str(models), "--cua", "uitars", "--cua-model", "m-cua",
            "--feedback", "+defects", "--variations", "german"]
    for role, flag in ROLE_FLAGS.items():
        if role != "cua":
            argv += [flag, f"m-{role}"]
    [config] = _configs(monkeypatch, *argv)
    plan = check_config(config, probe_endpoints=False)
    for role in ROLES:
        provider = plan.provider(role)
        expected = ("uitars", "m-cua") if role == "cua" else (f"m-{role}", f"m-{role}")
        assert (provider.name, provider.model, provider.offline) == (*expected, False), role
    assert plan.app_ids == [APP] and plan.offline_roles() == []


@pytest.mark.parametrize(("argv", "named"), [
    *(([flag, "gpt-5"], f"{flag} gpt-5") for role, flag in ROLE_FLAGS.items() if role != "cua"),
    (["--cua", "uitars"], "--cua uitars"), (["--cua-model", "uitars-1.5-7b"], "--cua-model uitars-1.5-7b"),
    (["--judge", "judge"], "--judge judge")])
@pytest.mark.parametrize("command", [["run"], ["sweep", EXAMPLE]])
def test_offline_with_a_roles_model_is_an_error_naming_both(command, argv, named, monkeypatch):
    monkeypatch.setattr(_run, "_execute", lambda *args, **kwargs: pytest.fail("a contradiction must not run"))
    result = CliRunner().invoke(cli, [*command, "--offline", *argv])
    assert result.exit_code == 2
    assert f"error: --offline and {named}:" in " ".join(result.output.split())


def test_every_role_has_its_flag_in_the_roles_group():
    groups = {spec.flag: spec.group for spec in config_flags()}
    assert all(groups[flag] == "roles" for flag in [*ROLE_FLAGS.values(), "--cua-model"])


def test_offline_keeps_a_role_flag_naming_an_offline_provider_and_plays_every_other_role_offline():
    config = command_config({"cua_policies": ["heuristic"], "coders": ["offline"]}, EXAMPLE, offline=True)
    assert check_config(config, probe_endpoints=False).offline and config.translator == "offline"


def test_run_help_shows_the_six_groups_each_flag_in_its_own():
    result = CliRunner().invoke(cli, ["run", "--help"], env={"COLUMNS": "120"})
    assert result.exit_code == 0
    lines = result.output.splitlines()
    panels = [line.split("─ ", 1)[1].split(" ─", 1)[0] for line in lines if line.startswith("╭─ ")]
    assert panels == ["Options", *(group.title() for group in GROUPS)]
    panel_of, panel = {}, None
    for line in lines:
        if line.startswith("╭─ "):
            panel = line.split("─ ", 1)[1].split(" ─", 1)[0]
        elif line.startswith("│ --"):
            panel_of[line.split()[1]] = panel
    for spec in config_flags():
        assert panel_of[spec.flag] == spec.group.title(), spec.flag
    assert (panel_of["--offline"], panel_of["--yes"], panel_of["--verbose"]) == ("Roles", "Budget", "Output")


def _commands(group, path=()):
    for name, command in group.commands.items():
        if hasattr(command, "commands"):
            yield from _commands(command, (*path, name))
        else:
            yield " ".join((*path, name)), command


SHARED_FLAGS = {"--apps", "--app", "--models", "--viewport"}
ONE_STAGE_ROLES = {"verify": "--verifier", "rollout": "--cua", "comment": "--commenter", "judge": "--judge"}


def test_every_command_says_of_a_config_flag_what_run_says():
    """`--apps`, `--app` (several), `--models`, `--viewport` and each role mean one thing in every command that
    takes them; a one-stage command names its role as `aui run` does (`--model` / `--policy` kept as aliases)."""
    root = typer.main.get_command(cli)
    run_help = {flag: param.help for param in root.commands["run"].params for flag in param.opts}
    seen = {}
    for name, command in _commands(root):
        for param in command.params:
            # (`defects eval --detector` is not among them: a list of detectors to compare, baselines included)
            for flag in set(param.opts) & (SHARED_FLAGS | {*ONE_STAGE_ROLES.values(), "--cua-model", "--commenter-mode"}):
                if flag == "--app" and not param.multiple:
                    continue  # one app (`aui verify`, `aui rollout`): its own option
                seen.setdefault(flag, []).append(name)
                assert param.help == run_help[flag], (name, flag, param.help)
    assert {flag: len(seen[flag]) > 2 for flag in SHARED_FLAGS} == dict.fromkeys(SHARED_FLAGS, True), seen
    assert {"defects inject", "apps validate", "apps fetch"} <= set(seen["--app"])
    old_names = {"verify": "--model", "rollout": "--policy", "comment": "--model", "judge": "--model"}
    for command, flag in ONE_STAGE_ROLES.items():
        assert command in seen[flag] and old_names[command] in _options(command), (command, flag)
    assert {"rollout"} <= set(seen["--cua-model"])
    assert _options("defects", "inject")["--apps-dir"] == "apps" and "--only" in _options("apps", "fetch")  # older names
    assert "comment" in seen["--commenter-mode"]


def test_an_app_id_given_as_the_spec_folder_is_refused_with_the_flag_that_picks_apps(tmp_path):
    """`--apps unit-converter` (or an old `--apps a,b`): one error line naming the value and pointing at `--app`."""
    for argv in (["run", "--offline", "--apps", APP], ["verify", "--app", APP, "--apps", APP, "--out", str(tmp_path)],
                 ["defects", "inject", "--apps", f"{APP},mortgage-calculator", "--out", str(tmp_path)]):
        result = CliRunner().invoke(cli, argv)
        output = " ".join(result.output.split())
        assert result.exit_code == 2 and "error:" in output and argv[argv.index("--apps") + 1] in output, output
        assert "to pick apps by id, name each with --app ID" in output, output
    result = CliRunner().invoke(cli, ["run", "--offline", "--apps", str(tmp_path / "no-such-folder")])
    assert result.exit_code == 2 and "--app ID" not in result.output  # a path: no hint


def test_the_model_check_blames_the_flag_that_named_the_model_and_the_file_for_the_rest(monkeypatch, tmp_path):
    """A model the run cannot use, named by a flag: the line names the flag typed (`--coder`), not the field behind it."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    result = CliRunner().invoke(cli, ["run", "--app", APP, "--coder", "gpt-5", "--out", str(tmp_path)])
    output = " ".join(result.output.split())
    assert result.exit_code == 2, output
    assert "error: --coder: model 'gpt-5'" in output and "field 'coders'" not in output, output
    # the same model named by the file: the file and its field are named, as before
    config = tmp_path / "run.yaml"
    config.write_text(yaml.safe_dump({"app_ids": [APP], "coders": ["gpt-5"], "out_dir": str(tmp_path)}))
    result = CliRunner().invoke(cli, ["sweep", str(config)])
    assert result.exit_code == 2 and f"error: {config}: field 'coders': model 'gpt-5'" in " ".join(result.output.split())


def test_an_unreachable_endpoint_is_blamed_on_the_flag_that_asked_for_its_model(tmp_path):
    """The pre-flight's TCP probe: the line names the flag, the CUA's default model blamed on `--cua` that chose it."""
    models = tmp_path / "models.yaml"
    models.write_text(yaml.safe_dump({"roles": {"cua": "m"}, "models": [
        {"name": "m", "provider": "openai-compatible", "model": "m", "base_url": f"http://127.0.0.1:{closed_port()}/v1"}]}))
    for flags, blamed in ((["--coder", "m"], "--coder"), (["--cua", "uitars"], "--cua"),
                          (["--cua", "uitars", "--cua-model", "m"], "--cua-model")):
        result = CliRunner().invoke(cli, ["run", "--app", APP, "--models", str(models), "--out", str(tmp_path), *flags])
        output = " ".join(result.output.split())
        assert result.exit_code == 2 and f"error: {blamed}: model 'm': endpoint" in output, output
        assert "play the role offline" in output, output


def test_a_run_made_again_with_another_config_says_what_changed(tmp_path):
    """`aui run` into a run folder whose manifest recorded another config says so, field by field, before it
    replaces the results (the same config resumed says nothing)."""
    config = make_config({"out_dir": str(tmp_path), "name": "r", "rounds": 2})
    assert _run._changed_since_last_run(config) == ""  # a first run
    config.run_dir.mkdir(parents=True)
    recorded = json.loads(config.model_dump_json())
    (config.run_dir / "manifest.json").write_text(json.dumps({"config": recorded}))
    assert _run._changed_since_last_run(config) == ""
    (config.run_dir / "manifest.json").write_text(json.dumps({"config": {**recorded, "rounds": 1, "seed": 7}}))
    assert _run._changed_since_last_run(config) == f"rounds 1 → 2, seed 7 → {config.seed}"


def test_a_run_with_some_roles_on_models_names_the_offline_ones_before_it_starts(tmp_path):
    """Before, only the run's last lines said which roles had stayed offline."""
    models = tmp_path / "models.yaml"
    models.write_text(yaml.safe_dump({"models": [{"name": "m", "provider": "openai-compatible", "model": "m",
                                                  "base_url": "http://127.0.0.1:9/v1"}]}))
    config = make_config({"app_ids": [APP], "coders": ["m"], "models_config": str(models), "out_dir": str(tmp_path)})
    plan = check_config(config, probe_endpoints=False)
    with _run.console.capture() as captured:
        _run._announce(config, plan, check_run_size(config, plan, assume_yes=True))
    said = " ".join(captured.get().split())
    assert "Offline providers play: proposer, verifier, commenter, judge, cua (heuristic) (no model named for them)" in said
