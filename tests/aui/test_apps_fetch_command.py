"""`aui apps fetch NAME`: the pinned benchmarks by name, from a real HTTP server on 127.0.0.1 standing in for
raw.githubusercontent.com or from a local folder (never the internet); every bad input one `error:` line, exit 2."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from apps_prompts import BASE_URL_VARIABLE, SOURCE_RECORD, default_destination, get_benchmark
from aui import app as cli
from tests.benchmark_sources import BenchmarkServer, closed_port, repo_files

ROOT = Path(__file__).resolve().parents[2]
TASKS_FILE = ROOT / "configs" / "gpt5-tasks.yaml"


def aui(*args: str):
    return CliRunner().invoke(cli, list(args))


def one_error_line(result) -> str:
    """The command's only stderr line, which must be an `error:` line (exit 2)."""
    assert result.exit_code == 2, result.output
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    return lines[0]


def fake_clone(folder: Path, name: str, keep=lambda path: True) -> Path:
    """A folder with the benchmark's files at their repository paths, but not their bytes."""
    for path in get_benchmark(name).files:
        if keep(path):
            (folder / path).parent.mkdir(parents=True, exist_ok=True)
            (folder / path).write_text(f"not the pinned {path}\n")
    return folder


def test_aui_gym_downloads_into_a_folder_that_aui_apps_list_reads(shared_data, tmp_path):
    bench = get_benchmark("aui-gym")
    with BenchmarkServer(repo_files(bench, shared_data / "aui-gym-apps", bench.destination)) as server:
        result = aui("apps", "fetch", "aui-gym", "--to", str(tmp_path / "aui-gym"), "--base-url", server.url)
        assert result.exit_code == 0, result.output
        assert sum(server.requests.values()) == 53
    first = result.stdout.splitlines()[0]
    assert first.startswith("aui-gym: 53 files, ") and "each sha256 as pinned" in first
    assert "github.com/showlab/AUI at a9b3653, MIT licence kept as LICENSE" in first and server.url in first
    assert f"use it: aui run --apps {tmp_path / 'aui-gym'}" in result.stdout
    listed = aui("apps", "list", str(tmp_path / "aui-gym"), "--json")
    assert listed.exit_code == 0, listed.output
    assert len(json.loads(listed.stdout)) == 52
    record = json.loads((tmp_path / "aui-gym" / SOURCE_RECORD).read_text())
    assert record["fetched_from"] == server.url and record["refresh"] == "aui apps fetch aui-gym --force"


def test_gpt5_apps_for_a_tasks_file_from_a_local_folder_then_nothing_to_do(shared_data, tmp_path):
    out = tmp_path / "gpt5-apps"
    result = aui("apps", "fetch", "gpt5-apps", "--from", str(shared_data / "gpt5-apps"), "--to", str(out),
                 "--tasks-file", str(TASKS_FILE))
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("gpt5-apps: 13 files, ")
    assert len(list(out.glob("*/index.html"))) == 12 and (out / "LICENSE").is_file()
    again = aui("apps", "fetch", "gpt5-apps", "--from", str(shared_data / "gpt5-apps"), "--to", str(out),
                "--app", "pomodoro", "--app", "regex-lab")
    assert again.exit_code == 0, again.output
    assert again.stdout.startswith(f"gpt5-apps is already complete in {out}: 3 files") and "--force" in again.stdout


def test_a_changed_file_in_from_is_refused_named_and_nothing_is_left(tmp_path):
    clone = fake_clone(tmp_path / "AUI", "aui-gym")
    line = one_error_line(aui("apps", "fetch", "aui-gym", "--from", str(clone), "--to", str(tmp_path / "out")))
    assert line.startswith("error: LICENSE from ") and "differs from aui-gym's pinned file" in line and "refused" in line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["AUI"]  # no destination, no temporary folder


def test_a_file_missing_in_from_is_named(tmp_path):
    clone = fake_clone(tmp_path / "AUI", "gpt5-apps", keep=lambda path: "pomodoro" not in path)
    line = one_error_line(aui("apps", "fetch", "gpt5-apps", "--from", str(clone), "--to", str(tmp_path / "out")))
    assert line.startswith(f"error: {clone}/apps/pomodoro/index.html: missing in --from {clone}")
    assert not (tmp_path / "out").exists()


def test_unknown_app_ids_and_conflicting_options_are_one_line_each(tmp_path):
    line = one_error_line(aui("apps", "fetch", "gpt5-apps", "--app", "pomodoro", "--app", "pomodor", "--to", str(tmp_path / "out")))
    assert "gpt5-apps has no app 'pomodor' (did you mean pomodoro" in line
    # the older spelling, a comma list, still means --app
    assert one_error_line(aui("apps", "fetch", "gpt5-apps", "--only", "pomodoro,pomodor", "--to", str(tmp_path / "out"))) == line
    line = one_error_line(aui("apps", "fetch", "gpt5-apps", "--app", "pomodoro", "--tasks-file", str(TASKS_FILE)))
    assert line == "error: give --app or --tasks-file, not both"
    line = one_error_line(aui("apps", "fetch", "gpt5-apps", "--tasks-file", str(tmp_path / "none.yaml")))
    assert "tasks file not found" in line
    assert not (tmp_path / "out").exists()


def test_a_user_sees_one_line_for_an_unknown_name_and_for_no_network(tmp_path):
    """As a user runs it: a real process, the base URL from the environment pointing at a closed port."""
    env = {**os.environ, BASE_URL_VARIABLE: f"http://127.0.0.1:{closed_port()}"}
    for args, said in ((["aui-gymm"], "error: unknown benchmark 'aui-gymm' (known: aui-gym, gpt5-apps)"),
                       (["aui-gym", "--to", str(tmp_path / "out")], f"error: could not reach {env[BASE_URL_VARIABLE]} "
                                                                    "(Connection refused); without internet")):
        done = subprocess.run([sys.executable, "-m", "aui", "apps", "fetch", *args], capture_output=True, text=True,
                              env=env, cwd=ROOT, timeout=300)
        assert done.returncode == 2, done.stdout + done.stderr
        lines = [line for line in done.stderr.splitlines() if line.strip()]
        assert len(lines) == 1 and lines[0].startswith(said), done.stderr
    assert lines[0].endswith("with --from PATH") and not (tmp_path / "out").exists()


def test_the_default_destination_is_the_project_data_folder_which_git_ignores():
    assert default_destination("aui-gym") == ROOT / "data" / "aui-gym"
    assert "/data/" in (ROOT / ".gitignore").read_text().splitlines()
    if shutil.which("git") and (ROOT / ".git").exists():
        ignored = subprocess.run(["git", "check-ignore", "-q", "data/aui-gym/LICENSE"], cwd=ROOT)
        assert ignored.returncode == 0
