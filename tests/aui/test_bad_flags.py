"""Bad values a user types, each refused before anything starts: one `error:` line naming the flag or the file, exit 2,
not a traceback (found by a newcomer's pass over every command, 2026-11-29)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from aui import app as cli

EXAMPLE = Path(__file__).resolve().parents[2] / "configs" / "sweep.example.yaml"


def refused(*args: str) -> str:
    result = CliRunner().invoke(cli, list(args))
    assert result.exit_code == 2, result.output  # a traceback is exit 1
    return " ".join(result.output.split())


@pytest.mark.parametrize(("args", "named"), [
    (["view", "--port", "99999"], "--port"),
    (["ui", "--port", "0"], "--port"),
    (["variations", "--show", "unit-converter", "--width", "0"], "--width"),
    (["variations", "--variation", "dark"], "--variation: only with --show APP_ID"),
    (["variations", "--out", "pictures", "--seed", "0", "--width", "640"], "--out, --seed, --width: only with --show"),
    (["apps", "validate", "--app", "nope"], "--app: unknown app id(s) 'nope'"),
    (["defects", "inject", "--out", "unused", "--types", ","], "--types ',': name at least one defect type"),
])
def test_a_bad_flag_is_named(args, named):
    assert named in refused(*args)


def test_a_config_that_is_a_folder_or_not_text_is_named(tmp_path):
    assert f"{tmp_path}: a folder, not a config file" in refused("sweep", str(tmp_path))
    binary = tmp_path / "sweep.yaml"
    binary.write_bytes(b"name: \xff\xfe\n")
    assert f"{binary}: not UTF-8 text" in refused("run", "--config", str(binary))


@pytest.mark.parametrize(("args", "named"), [
    (["--cron", "not a cron"], "--cron 'not a cron': not a cron schedule"),
    (["--cron", "61 3 * * *"], "--cron '61 3 * * *'"),
    (["--cron", "0 3 * * *", "--name", "../x"], "--name '../x'"),
])
def test_deploy_names_a_bad_schedule_or_name_before_prefect_starts(args, named):
    assert named in refused("deploy", str(EXAMPLE), *args)


@pytest.mark.parametrize("command", [["verify"], ["rollout", "--task", "swap-to-feet-metres"]])
def test_a_path_that_cannot_be_used_as_given_is_one_error_line_naming_it(tmp_path, command):
    """`aui`'s entry point: an OSError with a file name (here --out is a file where a folder goes) is one line."""
    taken = tmp_path / "taken"
    taken.write_text("mine")
    done = subprocess.run([str(Path(sys.executable).parent / "aui"), *command, "--app", "unit-converter", "--out", str(taken)],
                          capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stderr.strip()) == (2, f"error: {taken}: File exists"), done.stderr[-2000:]
    assert taken.read_text() == "mine"


def test_an_app_file_that_is_missing_or_not_text_is_named_with_its_flag(tmp_path):
    binary = tmp_path / "app.html"
    binary.write_bytes(b"<html>\xff\xfe</html>")
    assert f"--html {binary}: not UTF-8 text" in refused(
        "verify", "--app", "unit-converter", "--html", str(binary), "--out", str(tmp_path / "v"))
    assert f"--html: no file at {tmp_path / 'nope.html'}" in refused(
        "rollout", "--app", "unit-converter", "--task", "swap-to-feet-metres", "--html", str(tmp_path / "nope.html"),
        "--out", str(tmp_path / "r"))


def test_a_model_detector_without_its_key_is_named_before_anything_is_judged(monkeypatch, tmp_path):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    output = refused("defects", "eval", str(tmp_path), "--detector", "detector")
    assert "OPENAI_API_KEY" in output and "(--detector offline needs no model)" in output, output


def test_one_bad_value_behind_two_fields_is_said_once():
    """`--viewport 100000x100000` sets a width and a height that fail alike: one problem, not the same line twice."""
    said = refused("run", "--viewport", "100000x100000", "--name", "unused")
    assert said.count("Input should be less than or equal to 4096") == 1, said


@pytest.mark.parametrize(("args", "named"), [
    (["--detector", "detector"], "--detector: 'detector' would play the detector, which this run does not use: `feedback` has no 'defects'"),
    (["--translator", "translator"], "--translator: 'translator' would play the translator, which this run does not use"),
    (["--feedback", "defects", "--commenter", "commenter"], "--commenter: 'commenter' would play the commenter"),
    (["--cua-model", "uitars-1.5-7b"], "--cua-model: 'uitars-1.5-7b': the run's CUA policies (heuristic) call no model"),
])
def test_a_model_named_for_a_role_the_run_does_not_play_is_refused_not_ignored(args, named):
    assert named in refused("run", "--app", "unit-converter", "--name", "unused", *args)


def test_a_one_stage_rollout_refuses_a_model_its_offline_policy_would_ignore(tmp_path):
    said = refused("rollout", "--app", "unit-converter", "--task", "swap-to-feet-metres", "--out", str(tmp_path / "t"),
                   "--cua", "heuristic", "--cua-model", "uitars-1.5-7b")
    assert "--cua-model uitars-1.5-7b: the heuristic policy calls no model" in said
    assert not (tmp_path / "t").exists()


@pytest.mark.parametrize("command", [["view", "."], ["ui"]])
def test_a_busy_port_is_one_error_line_before_a_server_starts(command):
    """Before, uvicorn printed its own error (exit 3) and Prefect its own (exit 0)."""
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert f"--port {port}: cannot listen on 127.0.0.1:{port}" in refused(*command, "--port", str(port))


@pytest.mark.parametrize("command", ["list", "import"])
def test_a_folder_with_no_app_in_it_is_named(command, tmp_path):
    (tmp_path / "notes.txt").write_text("not an app spec")
    assert f"error: no app found in {tmp_path}" in refused("apps", command, str(tmp_path))


def test_a_run_whose_folder_would_go_where_a_file_is_is_refused_before_it_starts(tmp_path):
    """It printed the whole pre-flight, started, and stopped on a NotADirectoryError with exit 1."""
    taken = tmp_path / "taken"
    taken.write_text("mine")
    said = refused("run", "--offline", "--app", "unit-converter", "--out", str(taken / "sub"))
    assert f"error: --out: {taken} is a file, where the run's folder {taken}/sub/offline-bundled goes" in said
    assert taken.read_text() == "mine"


def test_an_ablation_refuses_out_and_the_comment_command_an_unknown_mode(tmp_path, synthetic):
    """`insights ablate --out` was dropped without a word; `comment --mode bogus` with the offline commenter exited 0."""
    assert "--out belongs to the principle table" in refused("insights", "ablate", str(tmp_path), "--principle",
                                                             "state visibility", "--out", str(tmp_path / "a.json"))
    said = refused("comment", str(synthetic(2)), "--commenter", "offline", "--commenter-mode", "bogus")
    assert "--commenter-mode 'bogus': not one of dashboard, text-only, screenshots-only" in said


def test_a_size_limit_is_blamed_on_the_flag_that_set_it_and_the_tasks_on_where_they_come_from():
    """The offline proposer's tasks are the spec's (not `tasks_per_app`); the refusals named fields a flag had set."""
    said = refused("run", "--offline", "--app", "unit-converter", "--max-tasks-per-app", "3")
    assert "--max-tasks-per-app: app 'unit-converter' would have 7 tasks in its spec; at most 3 per app" in said
    said = refused("run", "--offline", "--app", "unit-converter", "--max-rollouts", "3")
    assert "more than max_rollouts (3); pass --yes to start it anyway, or raise --max-rollouts" in said
