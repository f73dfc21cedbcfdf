"""Secrets: API keys come from the environment only, and no file, log, cache entry or Prefect record holds one.

An online sweep runs every role through the real `openai` client against a scripted server
(`flows.testing.ScriptedRoles`). The model registry names the key as `${AUI_TEST_FAKE_KEY}`;
the environment holds a recognisable random fake (and another in `OPENAI_API_KEY`). The first
coder request is answered with a 503 whose message echoes the credential, as a misbehaving
proxy might, so the retry's warning has a chance to leak it. Then every byte the run wrote is
searched: the run folder (artifacts, manifest, results, report, trajectories), the model-call
cache, Prefect's persisted task results, the log output, and — through the Prefect client —
the flow runs' parameters and states, their task runs, logs and artifacts.

The search must be able to fail: the server saw the key (so it was really in play), and the
scanner finds a planted copy, also inside a zip and a gzip member.
"""

from __future__ import annotations

import gzip
import io
import json
import secrets
import time
import zipfile
from pathlib import Path

import pytest
import yaml

from experiment import make_config
from flows import sweep
from flows.testing import ONLINE_ROLES, ScriptedRoles, click_point, role_of
from llm.testing import RecordedRequest, Reply, ScriptedOpenAIServer, reply_status

APP = "unit-converter"
TASKS = ["swap-to-feet-metres", "miles-to-km"]


def scan_bytes(data: bytes, needles: list[bytes], where: str) -> list[str]:
    """Where any needle occurs in `data`, looking inside zip and gzip members too."""
    found = [f"{where}: {needle[:24]!r}..." for needle in needles if needle in data]
    if data[:2] == b"\x1f\x8b":
        try:
            found += scan_bytes(gzip.decompress(data), needles, f"{where} (gunzipped)")
        except (OSError, EOFError):
            pass
    if data[:4] == b"PK\x03\x04":
        try:
            with zipfile.ZipFile(io.BytesIO(data)) as archive:
                for member in archive.namelist():
                    found += scan_bytes(archive.read(member), needles, f"{where}!{member}")
        except zipfile.BadZipFile:
            pass
    return found


def scan_tree(root: Path, needles: list[bytes]) -> tuple[list[str], int]:
    """(findings, number of files read) for every file under `root`."""
    found, files = [], 0
    for path in sorted(root.rglob("*")):
        if path.is_file():
            files += 1
            found += scan_bytes(path.read_bytes(), needles, str(path))
    return found, files


def test_the_scanner_finds_a_planted_key_in_plain_files_zips_and_gzips(tmp_path):
    key = b"sk-FAKE-do-not-leak-" + secrets.token_hex(8).encode()
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "a" / "b" / "log.txt").write_bytes(b"header\n" + key + b"\n")
    with zipfile.ZipFile(tmp_path / "trace.zip", "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("inner/events.json", b'{"authorization": "Bearer ' + key + b'"}')
    (tmp_path / "cache.json.gz").write_bytes(gzip.compress(b"x" * 100 + key))
    (tmp_path / "clean.txt").write_bytes(b"nothing here")
    found, files = scan_tree(tmp_path, [key])
    assert files == 4
    assert len(found) == 3, found
    assert any("trace.zip!inner/events.json" in f for f in found)
    assert any("gunzipped" in f for f in found)


class EchoingRoles:
    """ScriptedRoles, except the first coder request gets a 503 echoing the request's credential."""

    def __init__(self, roles: ScriptedRoles):
        self.roles, self.echoed = roles, 0

    def __call__(self, request: RecordedRequest) -> Reply:
        if role_of(request) == "coder" and not self.echoed:
            self.echoed += 1
            return reply_status(503, message=f"upstream rejected credential {request.headers.get('authorization')}")
        return self.roles(request)


def write_registry(server: ScriptedOpenAIServer, path: Path) -> Path:
    """Every role on `scripted`, whose key is `${AUI_TEST_FAKE_KEY}`; an unused OpenAI entry reads `${OPENAI_API_KEY}`."""
    path.write_text(yaml.safe_dump({
        "roles": {role: "scripted" for role in ("coder", "proposer", "verifier", "commenter", "cua")},
        "models": [
            {"name": "scripted", "provider": "openai-compatible", "model": "scripted-model", "base_url": server.base_url,
             "api_key": "${AUI_TEST_FAKE_KEY}", "timeout_s": 60, "max_retries": 2,
             "prices": {"input_usd_per_1m": 1.0, "output_usd_per_1m": 2.0}},
            {"name": "gpt-5", "provider": "openai", "model": "gpt-5", "api_key": "${OPENAI_API_KEY}"},
            {"name": "offline", "provider": "offline"},
        ],
    }), encoding="utf-8")
    return path


async def prefect_records(since: float) -> tuple[str, dict[str, int]]:
    """Flow runs started after `since` (epoch s) with their task runs, logs and artifacts, as one JSON text."""
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import (
        ArtifactFilter,
        ArtifactFilterFlowRunId,
        FlowRunFilter,
        FlowRunFilterStartTime,
        LogFilter,
        LogFilterFlowRunId,
        TaskRunFilter,
        TaskRunFilterFlowRunId,
    )
    from prefect.types import DateTime

    async with get_client() as client:
        flow_runs = await client.read_flow_runs(flow_run_filter=FlowRunFilter(
            start_time=FlowRunFilterStartTime(after_=DateTime.fromtimestamp(since - 1))))
        ids = [run.id for run in flow_runs]
        task_runs = await client.read_task_runs(task_run_filter=TaskRunFilter(flow_run_id=TaskRunFilterFlowRunId(any_=ids)))
        logs = await client.read_logs(log_filter=LogFilter(flow_run_id=LogFilterFlowRunId(any_=ids)))
        artifacts = await client.read_artifacts(artifact_filter=ArtifactFilter(flow_run_id=ArtifactFilterFlowRunId(any_=ids)))
    records = {"flow_runs": [r.model_dump(mode="json") for r in flow_runs],
               "task_runs": [r.model_dump(mode="json") for r in task_runs],
               "logs": [r.model_dump(mode="json") for r in logs],
               "artifacts": [r.model_dump(mode="json") for r in artifacts]}
    return json.dumps(records), {kind: len(items) for kind, items in records.items()}


@pytest.mark.timeout(900)
async def test_no_file_log_cache_or_prefect_record_of_a_run_holds_the_api_key(
        tmp_path, prefect_server, monkeypatch, capfd, caplog):
    from prefect.settings import PREFECT_LOCAL_STORAGE_PATH, temporary_settings

    key = "sk-FAKE-do-not-leak-" + secrets.token_hex(16)
    openai_key = "sk-FAKE-openai-env-" + secrets.token_hex(16)
    monkeypatch.setenv("AUI_TEST_FAKE_KEY", key)
    monkeypatch.setenv("OPENAI_API_KEY", openai_key)
    monkeypatch.setenv("AUI_CACHE_DIR", str(tmp_path / "cache"))  # the model-call cache, inside what is searched
    monkeypatch.delenv("AUI_LLM_CACHE", raising=False)
    caplog.set_level("DEBUG")
    needles = [key.encode(), openai_key.encode()]
    started = time.time()

    roles = ScriptedRoles(APP, TASKS, clicks={"swap-to-feet-metres": await click_point(APP, "#swap")})
    script = EchoingRoles(roles)
    with ScriptedOpenAIServer(script) as server, temporary_settings({PREFECT_LOCAL_STORAGE_PATH: tmp_path / "prefect-results"}):
        models = write_registry(server, tmp_path / "models.yaml")
        config = make_config({
            "name": "secrets", "app_ids": [APP], "rounds": 1, "revision_modes": ["integrated"], **ONLINE_ROLES,
            "tasks_per_app": 3, "max_steps": 3, "out_dir": str(tmp_path / "runs"), "models_config": str(models),
        })
        results = await sweep(config)

    # The key was in play: every request carried it, and one reply echoed it back.
    assert script.echoed == 1
    assert server.requests and all(r.headers.get("authorization") == f"Bearer {key}" for r in server.requests)
    assert {role_of(r) for r in server.requests} >= {"coder", "proposer", "verifier", "uitars", "commenter"}
    assert len(results) == 2 and any(t.success for r in results for t in r.tasks)

    # Files: the run folder (artifacts, manifest, results, report), the cache, Prefect's persisted results.
    run_dir = config.run_dir
    for name in ("manifest.json", "results.json", "results.csv", "results.md", "report.html"):
        assert (run_dir / name).is_file(), name
    assert any((tmp_path / "cache").rglob("*.json")), "the model-call cache wrote nothing: it was not searched"
    assert any((tmp_path / "prefect-results").rglob("*")), "no persisted Prefect results: they were not searched"
    found, files = scan_tree(tmp_path, needles)
    assert files > 20
    assert not found, found

    # Logs: what the run printed, and every record logged in this process.
    out, err = capfd.readouterr()
    assert not scan_bytes((out + err).encode(), needles, "captured output")
    logged = "\n".join(f"{r.name} {r.getMessage()} {r.exc_text or ''}" for r in caplog.records)
    assert "retrying" in logged, "the echoed 503 was not retried with a warning"
    assert not scan_bytes(logged.encode(), needles, "log records")

    # Prefect: flow run parameters and states, task runs, logs and artifacts of this run.
    text, counts = await prefect_records(started)
    assert counts["flow_runs"] >= 2 and counts["task_runs"] > 5 and counts["logs"] > 0 and counts["artifacts"] > 0, counts
    assert "secrets" in text and str(models) in text
    assert not scan_bytes(text.encode(), needles, "Prefect records")

    # The manifest names the model, its id and its endpoint; never a key.
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["models"]["scripted"]["model"] == "scripted-model"
    assert manifest["models"]["scripted"]["endpoint"] == server.base_url
    assert "api_key" not in json.dumps(manifest)
