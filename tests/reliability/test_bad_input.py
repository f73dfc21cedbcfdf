"""Bad input wherever it enters, through the real `aui` command: one clear line, a non-zero exit, nothing lost.

Each case runs `aui` as a subprocess and checks that it exits non-zero with exactly one
`error: ...` line naming the file, field or value at fault, prints no traceback, and leaves an
earlier run's folder in the same `--out` folder byte for byte as it was. Input that can be
checked before the sweep starts (app specs, tasks files, model and policy names, endpoints,
`--v0-dir`) fails before Prefect starts a server: within seconds, and no run folder is made.

A coder that answers prose instead of HTML is found only mid-run: the coder asks again a
bounded number of times, the generation is recorded as an explicit error, the other track of
the sweep finishes with its results written, and the command still exits non-zero.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import time
from pathlib import Path

import pytest
import yaml

from flows import MODEL_RETRIES
from flows.testing import ONLINE_ROLES, ScriptedRoles, role_of
from llm.testing import RecordedRequest, Reply, ScriptedOpenAIServer, reply_text

ROOT = Path(__file__).resolve().parents[2]
AUI = ROOT / ".venv" / "bin" / "aui"
APP = "unit-converter"
BUNDLED_APP = ROOT / "apps_prompts" / "bundled" / APP
EARLY_FAILURE_S = 60
"""A bound for failures found before the sweep starts (≈ 1–3 s on a quiet machine; the CI box is shared)."""


def aui_env(folder: Path, prefect_api_url: str | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PREFECT_", "PYTEST_", "AUI_"))}
    env.update({"PREFECT_HOME": str(folder / "prefect-home"), "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
                "DO_NOT_TRACK": "1", "AUI_CACHE_DIR": str(folder / "call-cache"), "COLUMNS": "200"})
    if prefect_api_url:
        env["PREFECT_API_URL"] = prefect_api_url
    return env


def run_aui(folder: Path, *args: str, prefect_api_url: str | None = None, timeout: float = 600) -> tuple[int, str, float]:
    """(exit code, stdout + stderr, seconds)."""
    started = time.monotonic()
    done = subprocess.run([str(AUI), *args], cwd=ROOT, env=aui_env(folder, prefect_api_url), capture_output=True,
                          text=True, timeout=timeout)
    return done.returncode, done.stdout + done.stderr, time.monotonic() - started


def the_error_line(output: str) -> str:
    """The one `error:` line of `output` (asserting there is exactly one, and no traceback)."""
    assert "Traceback" not in output, output
    lines = [line for line in output.splitlines() if line.startswith("error:")]
    assert len(lines) == 1, output
    return lines[0]


def earlier_run(out: Path, name: str) -> dict[Path, bytes]:
    """A finished run's folder in `out` (results, manifest, an app version); returns its files' bytes."""
    run_dir = out / name
    (run_dir / "apps" / APP / "offline" / "round-0").mkdir(parents=True)
    files = {
        run_dir / "results.json": json.dumps({"table": [{"round": 0, "fc": {"overall": 1.0}}], "apps": []}).encode(),
        run_dir / "results.csv": b"coder,cua,mode,round,domain,tasks,fc,sr\noffline,heuristic,integrated,0,overall,7,1.0000,0.5714\n",
        run_dir / "manifest.json": b'{"seed": 0}',
        run_dir / ".run-key": b"0123456789abcdef",
        run_dir / "apps" / APP / "offline" / "round-0" / "index.html": (BUNDLED_APP / "index.html").read_bytes(),
    }
    for path, data in files.items():
        path.write_bytes(data)
    return files


def assert_untouched(out: Path, files: dict[Path, bytes], allowed_new: set[str] = frozenset()) -> None:
    for path, data in files.items():
        assert path.read_bytes() == data, f"{path} changed"
    earlier = next(iter(files)).parent
    now = {p for p in earlier.rglob("*") if p.is_file()}
    assert now == set(files), f"files added to the earlier run: {sorted(now - set(files))}"
    assert {p.name for p in out.iterdir()} <= {earlier.name, *allowed_new}, sorted(out.iterdir())


def assert_failed_before_the_sweep(code: int, output: str, seconds: float) -> str:
    assert code == 2, output
    assert "Starting temporary server" not in output and "Beginning flow run" not in output, output
    assert seconds < EARLY_FAILURE_S, seconds
    return the_error_line(output)


@pytest.fixture
def apps_with_a_malformed_spec(tmp_path) -> Path:
    apps = tmp_path / "apps"
    shutil.copytree(BUNDLED_APP, apps / APP)
    (apps / "broken").mkdir()
    (apps / "broken" / "app.yaml").write_text("id: broken\ntitle: [an unclosed list\nprompt: x\n", encoding="utf-8")
    return apps


def test_a_malformed_app_yaml_is_named_by_apps_validate_and_the_good_apps_are_still_proved(tmp_path, apps_with_a_malformed_spec):
    code, output, _ = run_aui(tmp_path, "apps", "validate", str(apps_with_a_malformed_spec), "--app", APP)
    assert code != 0, output
    line = the_error_line(output)
    assert str(apps_with_a_malformed_spec / "broken" / "app.yaml") in line and "not valid YAML" in line
    assert "1 apps" in output and "0 failing" in output and "1 file errors" in output, output


def test_a_malformed_app_yaml_stops_aui_run_before_the_sweep_naming_the_file(tmp_path, apps_with_a_malformed_spec):
    out = tmp_path / "runs"
    kept = earlier_run(out, "bad-apps")
    code, output, seconds = run_aui(tmp_path, "run", "--offline", "--apps", str(apps_with_a_malformed_spec),
                                    "--out", str(out), "--name", "bad-apps", "--rounds", "0")
    line = assert_failed_before_the_sweep(code, output, seconds)
    assert str(apps_with_a_malformed_spec / "broken" / "app.yaml") in line and "not valid YAML" in line
    assert_untouched(out, kept)


def test_a_tasks_file_with_a_duplicate_id_is_refused_naming_the_file_the_id_and_the_app(tmp_path):
    tasks = tmp_path / "tasks.yaml"
    tasks.write_text(yaml.safe_dump({APP: [
        {"id": "swap", "description": "Swap the units.", "expected_outcome": "The units are swapped."},
        {"id": "swap", "description": "Swap them back.", "expected_outcome": "The units are as at first."},
    ]}), encoding="utf-8")
    out = tmp_path / "runs"
    kept = earlier_run(out, "dup-tasks")
    code, output, seconds = run_aui(tmp_path, "run", "--offline", "--app", APP, "--tasks-file", str(tasks),
                                    "--out", str(out), "--name", "dup-tasks", "--rounds", "0")
    line = assert_failed_before_the_sweep(code, output, seconds)
    assert str(tasks) in line and "duplicate task id 'swap'" in line and APP in line, line
    assert_untouched(out, kept)

    code, output, _ = run_aui(tmp_path, "apps", "validate", "--app", APP, "--tasks-file", str(tasks))
    assert code != 0 and "duplicate task id 'swap'" in the_error_line(output), output


def sweep_config(folder: Path, name: str, **fields) -> Path:
    path = folder / f"{name}.yaml"
    path.write_text(yaml.safe_dump({"name": name, "app_ids": [APP], "rounds": 0, "max_steps": 2,
                                    "out_dir": str(folder / "runs"), **fields}), encoding="utf-8")
    return path


@pytest.mark.parametrize(("fields", "names"), [
    ({"coders": ["gpt-9000"]}, ["field 'coders'", "'gpt-9000'", "configs/models.yaml"]),
    ({"cua_policies": ["magic-agent"]}, ["field 'cua_policies'", "'magic-agent'", "heuristic"]),
    ({"verifier": "no-such-verifier"}, ["field 'verifier'", "'no-such-verifier'"]),
], ids=["unknown-model", "unknown-policy", "unknown-verifier-model"])
def test_a_config_naming_an_unknown_model_or_policy_is_refused_naming_the_file_field_and_value(tmp_path, fields, names):
    config = sweep_config(tmp_path, "unknown-name", **fields)
    kept = earlier_run(tmp_path / "runs", "unknown-name")
    code, output, seconds = run_aui(tmp_path, "sweep", str(config))
    line = assert_failed_before_the_sweep(code, output, seconds)
    for name in [str(config), *names]:
        assert name in line, (name, line)
    assert_untouched(tmp_path / "runs", kept)


def a_closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]  # closed on exit: nobody listens there


def test_an_unreachable_endpoint_fails_fast_naming_the_model_and_the_endpoint(tmp_path):
    endpoint = f"http://127.0.0.1:{a_closed_port()}/v1"
    models = tmp_path / "models.yaml"
    models.write_text(yaml.safe_dump({"roles": {"coder": "far-away"}, "models": [
        {"name": "far-away", "provider": "openai-compatible", "model": "m", "base_url": endpoint, "api_key": "sk-x"},
        {"name": "offline", "provider": "offline"},
    ]}), encoding="utf-8")
    config = sweep_config(tmp_path, "unreachable", coders=["far-away"], models_config=str(models))
    kept = earlier_run(tmp_path / "runs", "unreachable")
    code, output, seconds = run_aui(tmp_path, "sweep", str(config))
    line = assert_failed_before_the_sweep(code, output, seconds)
    assert "'far-away'" in line and endpoint in line and "unreachable" in line, line
    assert_untouched(tmp_path / "runs", kept)


def test_a_model_whose_key_variable_is_unset_is_refused_naming_the_model_and_the_variable(tmp_path):
    models = tmp_path / "models.yaml"
    models.write_text(yaml.safe_dump({"models": [
        {"name": "needs-key", "provider": "openai", "model": "gpt-5", "api_key": "${AUI_TEST_UNSET_KEY_VARIABLE}"},
        {"name": "offline", "provider": "offline"},
    ]}), encoding="utf-8")
    config = sweep_config(tmp_path, "no-key", coders=["needs-key"], models_config=str(models))
    code, output, seconds = run_aui(tmp_path, "sweep", str(config))
    line = assert_failed_before_the_sweep(code, output, seconds)
    assert "'needs-key'" in line and "AUI_TEST_UNSET_KEY_VARIABLE" in line, line


@pytest.mark.shared_data
def test_a_v0_dir_without_the_named_app_is_refused_naming_the_folder_and_the_app(tmp_path, shared_data):
    out = tmp_path / "runs"
    kept = earlier_run(out, "v0-missing")
    code, output, seconds = run_aui(tmp_path, "run", "--offline", "--apps", str(shared_data / "aui-gym-apps"),
                                    "--v0-dir", str(shared_data / "gpt5-apps"), "--app", "artisan-csa",
                                    "--out", str(out), "--name", "v0-missing", "--rounds", "0")
    line = assert_failed_before_the_sweep(code, output, seconds)
    assert f"--v0-dir {shared_data / 'gpt5-apps'}: no artisan-csa/index.html" in line, line
    assert_untouched(out, kept)


class ProseCoder:
    """ScriptedRoles, except the coder answers in prose, never with an HTML document."""

    def __init__(self, roles: ScriptedRoles):
        self.roles = roles

    def __call__(self, request: RecordedRequest) -> Reply:
        if role_of(request) == "coder":
            return reply_text("I would build a tidy converter with two inputs and a swap button. Shall I go ahead?")
        return self.roles(request)


@pytest.mark.timeout(900)
def test_a_coder_answering_prose_is_retried_a_bounded_number_of_times_then_recorded_and_the_sweep_finishes(
        tmp_path, prefect_server):
    from prefect.settings import PREFECT_API_URL

    roles = ScriptedRoles(APP, ["swap-to-feet-metres", "miles-to-km"])
    with ScriptedOpenAIServer(ProseCoder(roles)) as server:
        models = roles.write_models_yaml(server, tmp_path / "models.yaml")
        # Two tracks of one app: the offline coder's (which must finish, results kept) and the scripted one's.
        config = sweep_config(tmp_path, "prose-coder", **{**ONLINE_ROLES, "coders": ["offline", "scripted"],
                                                          "tasks_per_app": 3, "models_config": str(models)})
        kept = earlier_run(tmp_path / "runs", "earlier")
        code, output, _ = run_aui(tmp_path, "sweep", str(config), prefect_api_url=PREFECT_API_URL.value())

    assert code == 1, output
    line = the_error_line(output)
    for needle in (APP, "scripted", "without an HTML document", "generating the first version"):
        assert needle in line, (needle, line)
    coder_requests = [r for r in server.requests if role_of(r) == "coder"]
    attempts_per_stage = 3  # the first reply and the coder's two retries with a nudge
    assert attempts_per_stage <= len(coder_requests) <= attempts_per_stage * (1 + MODEL_RETRIES["retries"]), len(coder_requests)
    assert any("no HTML document" in json.dumps(r.json) for r in coder_requests)

    run_dir = tmp_path / "runs" / "prose-coder"
    payload = json.loads((run_dir / "results.json").read_text())
    by_coder = {r["coder"]: r for r in payload["apps"]}
    assert set(by_coder) == {"offline", "scripted"}
    assert by_coder["offline"]["errors"] == [] and any(t["termination"] for t in by_coder["offline"]["tasks"])
    assert any("without an HTML document" in e for e in by_coder["scripted"]["errors"])
    # Every proposed task of the failed track is there with the reason (not an empty list that says nothing).
    assert [t["task_id"] for t in by_coder["scripted"]["tasks"]] == [t["task_id"] for t in by_coder["offline"]["tasks"]]
    assert by_coder["scripted"]["tasks"] and all(t["reason"] and not t["success"] for t in by_coder["scripted"]["tasks"])
    assert (run_dir / "report.html").is_file()
    assert_untouched(tmp_path / "runs", kept, allowed_new={"prose-coder"})
