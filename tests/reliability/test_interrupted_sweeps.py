"""Interrupted sweeps: SIGKILL an online `aui sweep` mid-generation, mid-rollout and mid-revision, run it again.

Every role is played by a scripted OpenAI-protocol server running in this test process
(`flows.testing.ScriptedRoles`); `aui sweep CONFIG` runs as a real subprocess (its own
PREFECT_HOME, the test harness's Prefect server, its own on-disk call cache) and reaches the
server over HTTP. In each case one kind of request hangs; while it is in flight the whole
process group (browser included) is killed with SIGKILL. The same command is then run again,
with the server answering at once. The second run must:

- complete (exit 0) with the same results — the FC/SR table and every task's success and
  termination — as an uninterrupted reference run of the same config (done once per module);
- send no model request again that had been answered before the kill: per role, requests of
  the killed run + requests of the re-run ≤ the reference run's + those in flight at the kill,
  and no answered text request (coder, proposer, verifier, commenter) reaches the server twice;
  what the re-run did not send came from Prefect's task cache or the on-disk call cache (its
  `cache_hits`, in results.json);
- leave nothing half-written: no `.tmp` / `.partial` / `.old` leftovers, every JSON file under
  the run folder parses, every trajectory ended; files finished before the kill are untouched.

SIGKILL at a synchronised point never lands inside a write, so the mid-revision case also plays
what such a kill would leave behind: every task result Prefect stored (Prefect writes them in
place, not atomically) cut in half, and a half-written call-cache temp file. A cut result must be
a cache miss, not a result: the stages run again, and the call cache answers their requests.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from cua.policies import uitars_task_of_request
from flows.testing import ONLINE_ROLES, REVISION_MARK, ScriptedRoles, user_text, click_point, role_of
from llm.testing import RecordedRequest, Reply, ScriptedOpenAIServer, reply_hang

APP = "unit-converter"
TASKS = ["swap-to-feet-metres", "miles-to-km"]
ROOT = Path(__file__).resolve().parents[2]
AUI = Path(sys.executable).with_name("aui")
HANG_S = 600.0  # "forever": the kill comes long before; closing the server ends the wait
RUN_TIMEOUT_S = 600
TEXT_ROLES = ("coder", "proposer", "verifier", "commenter")


class Script:
    """`ScriptedRoles`, except that requests matching `hang_when` hang while `hanging` is set."""

    def __init__(self, roles: ScriptedRoles, hang_when: Callable[[RecordedRequest], bool] | None = None):
        self.roles = roles
        self.hang_when = hang_when
        self.hanging = hang_when is not None
        self.hung: list[RecordedRequest] = []  # requests that got no answer (in flight at the kill)
        self._lock = threading.Lock()

    def __call__(self, request: RecordedRequest) -> Reply:
        if self.hanging and self.hang_when(request):
            with self._lock:
                self.hung.append(request)
            return reply_hang(HANG_S)
        return self.roles(request)


def _is_generation(request: RecordedRequest) -> bool:
    return role_of(request) == "coder" and "You wrote this" not in user_text(request)


def _is_revision(request: RecordedRequest) -> bool:
    return role_of(request) == "coder" and "You wrote this" in user_text(request)


def _uitars_task(request: RecordedRequest) -> str:
    return uitars_task_of_request(request.json["messages"]) or ""


def _counts(requests: list[RecordedRequest]) -> Counter:
    return Counter(role_of(r) for r in requests)


def _text_bodies(requests: list[RecordedRequest]) -> list[str]:
    return [json.dumps(r.json, sort_keys=True) for r in requests if role_of(r) in TEXT_ROLES]


# ---- running `aui sweep` ------------------------------------------------------------------------

def _env(folder: Path) -> dict[str, str]:
    from prefect.settings import PREFECT_API_URL

    env = {k: v for k, v in os.environ.items() if not k.startswith(("PREFECT_", "PYTEST_", "AUI_"))}
    env.update({
        "PREFECT_HOME": str(folder / "prefect-home"),  # its result storage: Prefect's task cache
        "PREFECT_API_URL": PREFECT_API_URL.value(),  # the session's test-harness server
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
        "DO_NOT_TRACK": "1",
        "AUI_CACHE_DIR": str(folder / "call-cache"),  # the on-disk model call cache (on)
        "COLUMNS": "200",
    })
    return env


def _write_config(folder: Path, roles: ScriptedRoles, server: ScriptedOpenAIServer) -> Path:
    models = roles.write_models_yaml(server, folder / "models.yaml")
    registry = yaml.safe_load(models.read_text())
    for model in registry["models"]:
        if model["name"] == "scripted":
            model["timeout_s"] = HANG_S  # a hung request must stay one request (no client retry) until the kill
    models.write_text(yaml.safe_dump(registry))
    config = folder / "sweep.yaml"
    config.write_text(yaml.safe_dump({
        "name": "interrupted", "app_ids": [APP], "rounds": 1, "revision_modes": ["integrated"], **ONLINE_ROLES,
        "tasks_per_app": 3, "max_steps": 3, "concurrency": 2,
        "out_dir": str(folder / "runs"), "models_config": str(models),
    }))
    return config


def _start(config: Path, folder: Path, log_name: str) -> tuple[subprocess.Popen, Path]:
    log = folder / log_name
    with log.open("wb") as handle:
        process = subprocess.Popen([str(AUI), "sweep", str(config)], cwd=ROOT, env=_env(folder), stdout=handle,
                                   stderr=subprocess.STDOUT, start_new_session=True)
    return process, log


def _finish(process: subprocess.Popen, log: Path) -> None:
    try:
        code = process.wait(timeout=RUN_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=60)
        raise AssertionError(f"`aui sweep` did not finish in {RUN_TIMEOUT_S} s: {log.read_text()[-3000:]}") from None
    finally:
        _reap(process)
    assert code == 0, log.read_text()[-4000:]


def _reap(process: subprocess.Popen) -> None:
    """Kill what is left of the run's process group (a browser, a helper), if anything."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _outcomes(payload: dict) -> dict:
    """Per app × coder × CUA × mode × round × task: (success, termination)."""
    return {(a["app_id"], a["coder"], a["cua"], a["mode"], a["round"], t["task_id"]): (t["success"], t["termination"])
            for a in payload["apps"] for t in a["tasks"]}


def _trajectories(run_dir: Path) -> dict[Path, dict | None]:
    found = {}
    for path in run_dir.rglob("trajectory.json"):
        try:
            found[path] = json.loads(path.read_bytes())
        except (OSError, ValueError):
            found[path] = None
    return found


def _finished(data: dict | None) -> bool:
    return data is not None and data.get("termination") is not None


def _final_path(path: Path) -> Path:
    folder = path.parent
    if folder.name.startswith(".") and folder.name.endswith(".partial"):
        folder = folder.with_name(folder.name[1:-len(".partial")])
    return folder / path.name


def _snapshot(run_dir: Path) -> dict[Path, tuple[int, bytes]]:
    """Every finished file of the run so far (not in a staging folder, not a temp file)."""
    files = {}
    for path in run_dir.rglob("*"):
        if path.is_file() and not any(p.endswith((".partial", ".tmp", ".old")) for p in path.relative_to(run_dir).parts):
            if path.name in (".run-key",):
                continue
            files[path] = (path.stat().st_mtime_ns, path.read_bytes())
    return files


def _decisions(run_dir: Path, payload: dict) -> int:
    """UI-TARS calls behind the run's trajectories: one per step (each reply is one action here),
    plus one per reply that could not be used."""
    total = 0
    for app in payload["apps"]:
        for task in app["tasks"]:
            if task["trajectory"]:
                data = json.loads((run_dir / task["trajectory"] / "trajectory.json").read_bytes())
                total += len(data["steps"]) + sum(len(step.get("invalid_replies") or []) for step in data["steps"])
    return total


def _cua_cache_hits(payload: dict) -> int:
    return payload["usage"]["by_role"].get("cua", {}).get("cached_calls", 0)


# ---- fixtures -----------------------------------------------------------------------------------

@pytest.fixture(scope="module")
async def clicks() -> dict[str, tuple[int, int]]:
    return {"swap-to-feet-metres": await click_point(APP, "#swap")}


@pytest.fixture(scope="module")
def reference(prefect_server, clicks, tmp_path_factory) -> dict:
    """An uninterrupted run of the same config: its results.json and the requests per role."""
    folder = tmp_path_factory.mktemp("reference")
    roles = ScriptedRoles(APP, TASKS, clicks=clicks)
    started = time.monotonic()
    with ScriptedOpenAIServer(Script(roles)) as server:
        config = _write_config(folder, roles, server)
        process, log = _start(config, folder, "reference.log")
        _finish(process, log)
        requests = list(server.requests)
    payload = json.loads((folder / "runs" / "interrupted" / "results.json").read_text())
    counts = _counts(requests)
    assert counts["unknown"] == 0
    calls = payload["usage"]["calls"]
    assert calls["calls"] == len(requests)
    # The model calls a run needs: the text roles' (fixed by the script), and one UI-TARS call per
    # decision in the final trajectories — their number depends on the machine's load: a checker
    # that times out after a click costs the rollout another step. Each was sent or answered by
    # the call cache (a later identical request: round 1 looks like round 0).
    text_needed = sum(counts[role] for role in TEXT_ROLES) + calls["cache_hits"] - _cua_cache_hits(payload)
    assert len(requests) + calls["cache_hits"] == text_needed + _decisions(folder / "runs" / "interrupted", payload)
    return {"payload": payload, "counts": counts, "text_needed": text_needed, "seconds": time.monotonic() - started}


# ---- the kill points ----------------------------------------------------------------------------

def _mid_generation(roles: ScriptedRoles):
    def ready(script: Script, run_dir: Path) -> bool:
        return bool(script.hung)
    return _is_generation, ready


def _mid_rollout(roles: ScriptedRoles):
    miles = next(t.description for t in roles.tasks if t.id == "miles-to-km")
    swap = next(t.description for t in roles.tasks if t.id == "swap-to-feet-metres")

    def hang_when(request: RecordedRequest) -> bool:
        return role_of(request) == "uitars" and _uitars_task(request) == miles

    def ready(script: Script, run_dir: Path) -> bool:
        # The miles rollout waits on its model (its trajectory begun, not ended); the swap rollout
        # beside it has ended.
        if not script.hung:
            return False
        found = _trajectories(run_dir).values()
        return (any(_finished(data) and data.get("task") == swap for data in found)
                and any(data is not None and not _finished(data) and data.get("task") == miles for data in found))
    return hang_when, ready


def _mid_revision(roles: ScriptedRoles):
    def ready(script: Script, run_dir: Path) -> bool:
        return bool(script.hung)
    return _is_revision, ready


KILL_POINTS = {"mid-generation": _mid_generation, "mid-rollout": _mid_rollout, "mid-revision": _mid_revision}


def _truncate_stored_results(folder: Path) -> int:
    """What a kill landing mid-write would leave: Prefect's stored task results cut in half, and a
    half-written call-cache entry. Prefect writes results in place (not atomically), so a cut file
    must be taken for a miss, never for a result; the call cache writes through temp files, so
    only a stray `.tmp` can be left. Returns the number of results cut."""
    results = [p for p in (folder / "prefect-home" / "storage").rglob("*") if p.is_file()]
    for path in results:
        data = path.read_bytes()
        path.write_bytes(data[: len(data) // 2])
    entries = sorted((folder / "call-cache" / "llm").rglob("*.json"))
    assert entries, "the call cache holds the killed run's answers"
    (entries[0].parent / f".{entries[0].stem[:8]}-killed.tmp").write_bytes(entries[0].read_bytes()[:40])
    assert results, "Prefect stored the killed run's task results"
    return len(results)


OBSERVED: dict[str, dict] = {}


@pytest.mark.timeout(1500)
@pytest.mark.parametrize("kill_point", list(KILL_POINTS))
def test_a_killed_sweep_resumes_to_the_same_results_without_repeating_finished_work(
        kill_point, reference, clicks, tmp_path):
    roles = ScriptedRoles(APP, TASKS, clicks=clicks)
    hang_when, ready = KILL_POINTS[kill_point](roles)
    script = Script(roles, hang_when)
    run_dir = tmp_path / "runs" / "interrupted"
    timings = {}
    with ScriptedOpenAIServer(script) as server:
        config = _write_config(tmp_path, roles, server)

        # 1. The first run, killed (process group, SIGKILL) while the chosen request is in flight.
        started = time.monotonic()
        first, log = _start(config, tmp_path, "first.log")
        try:
            deadline = time.monotonic() + RUN_TIMEOUT_S
            while not ready(script, run_dir):
                assert first.poll() is None, f"the first run ended before the kill point: {log.read_text()[-3000:]}"
                assert time.monotonic() < deadline, f"{kill_point}: not reached in {RUN_TIMEOUT_S} s"
                time.sleep(0.05)
        finally:
            os.killpg(first.pid, signal.SIGKILL)
            first.wait(timeout=60)
        timings["first"] = time.monotonic() - started
        first_requests = list(server.requests)
        in_flight = list(script.hung)
        assert len(in_flight) == 1, f"{kill_point}: {len(in_flight)} requests hung"
        assert not (run_dir / "results.json").exists()
        before = _snapshot(run_dir)
        trajectories_before = _trajectories(run_dir)
        finished_rollouts = {p: before.get(p) or (p.stat().st_mtime_ns, p.read_bytes())
                             for p, data in trajectories_before.items() if _finished(data)}

        cut = _truncate_stored_results(tmp_path) if kill_point == "mid-revision" else 0

        # 2. The same command again; the server now answers everything at once.
        script.hanging = False
        started = time.monotonic()
        second, log = _start(config, tmp_path, "second.log")
        _finish(second, log)
        timings["second"] = time.monotonic() - started
        rerun_requests = list(server.requests)[len(first_requests):]

    payload = json.loads((run_dir / "results.json").read_text())
    expected = reference["payload"]

    # Same results as the uninterrupted run.
    assert payload["table"] == expected["table"]
    assert _outcomes(payload) == _outcomes(expected)
    assert {(a["app_id"], a["round"]) for a in payload["apps"]} == {(APP, 0), (APP, 1)}
    revised = next(a for a in payload["apps"] if a["round"] == 1)
    assert REVISION_MARK in (run_dir / revised["html"]).read_text(encoding="utf-8")

    # No answered request sent again: the caches (Prefect's, the call cache) stood in for them.
    first_counts, rerun_counts = _counts(first_requests), _counts(rerun_requests)
    hung_counts = _counts(in_flight)
    answered_first = [r for r in first_requests if not any(r is h for h in in_flight)]
    decisions = _decisions(run_dir, payload)
    limits = {role: reference["counts"][role] for role in TEXT_ROLES} | {"uitars": decisions}
    assert set(first_counts) | set(rerun_counts) <= set(limits), (first_counts, rerun_counts)
    for role, limit in limits.items():
        assert first_counts[role] + rerun_counts[role] <= limit + hung_counts[role], (
            role, dict(first_counts), dict(rerun_counts), limits, dict(hung_counts))
    repeated = set(_text_bodies(answered_first)) & set(_text_bodies(rerun_requests))
    assert not repeated, f"{len(repeated)} answered request(s) sent again, e.g. {next(iter(repeated))[:300]}"
    assert set(_text_bodies(in_flight)) <= set(_text_bodies(rerun_requests)), "the request cut off is sent again"
    calls = payload["usage"]["calls"]
    assert calls["calls"] == len(rerun_requests), calls  # every real call of the re-run reached the server once
    needed = reference["text_needed"] + decisions
    # Every call the results needed was made once: answered before the kill (and then skipped by
    # Prefect's task cache or reused from the rollout's folder), or sent by the re-run, or answered
    # by the call cache. (Before the kill no request repeats another, so the killed run had no
    # cache hits.) A repeated call would make the left side larger.
    served = len(answered_first) + len(rerun_requests) + calls["cache_hits"]
    if not cut:
        assert served == needed, (len(answered_first), len(rerun_requests), calls, needed)
    else:
        # Every stored stage result was cut, so the stages ran again — yet nothing answered before
        # the kill reached the server again: the call cache answered every such text request.
        assert len(answered_first) + len(rerun_requests) <= needed, (len(answered_first), len(rerun_requests), needed)
        assert calls["cache_hits"] - _cua_cache_hits(payload) >= len(_text_bodies(answered_first)), calls
    from_task_cache = needed - len(rerun_requests) - calls["cache_hits"]

    # Nothing half-written or left over.
    leftovers = [p for p in run_dir.rglob("*") if p.name.endswith((".tmp", ".partial", ".old"))]
    assert not leftovers, leftovers
    for path in run_dir.rglob("*.json"):
        json.loads(path.read_bytes())  # parses: no truncated file was taken for a whole one
    for path in (tmp_path / "call-cache").rglob("*.json"):
        assert json.loads(path.read_bytes())["response"]  # the call cache holds whole entries only
    after = _trajectories(run_dir)
    assert after and all(_finished(data) for data in after.values()), [str(p) for p, d in after.items() if not _finished(d)]
    referenced = {run_dir / t["trajectory"] / "trajectory.json" for a in payload["apps"] for t in a["tasks"] if t["trajectory"]}
    assert set(after) == referenced
    for path in referenced:  # a redone rollout is clean: only the files its trajectory names
        data = json.loads(path.read_bytes())
        named = {"trajectory.json", "tuples.jsonl", "dashboard.png", "rollout-inputs.json", data["initial_screenshot"]}
        named |= {step["screenshot"] for step in data["steps"] if step.get("screenshot")}
        assert {p.name for p in path.parent.iterdir()} == named, path.parent
    for path, (mtime, content) in finished_rollouts.items():  # a finished rollout is kept as it was
        final = _final_path(path)
        assert final.exists() and final.read_bytes() == content, f"a finished rollout was redone: {path}"
    for path, (mtime, content) in before.items():  # every file finished before the kill is kept
        if path.name in ("manifest.json", "log.txt"):
            continue  # rewritten by every run (the run's environment; Prefect's log lines, appended)
        assert path.exists(), path
        if not cut:
            assert path.read_bytes() == content and path.stat().st_mtime_ns == mtime, path
        elif "rollouts" in path.parts or path.suffix == ".html":
            # With the stored results cut the stages ran again: the same app versions, and the
            # finished rollouts reused from their folders. (verdicts.json and feedback records
            # are rewritten: they hold timings.)
            assert path.read_bytes() == content, path

    OBSERVED[kill_point] = {
        "reference": dict(reference["counts"]), "first": dict(first_counts), "in_flight": dict(hung_counts),
        "rerun": dict(rerun_counts), "needed": needed, "served": served, "rerun_calls": calls, "from_task_cache": from_task_cache,
        "seconds": {k: round(v, 1) for k, v in timings.items()}, "reference_seconds": round(reference["seconds"], 1),
        "files_before_kill": len(before), "prefect_results_cut": cut, "finished_rollouts_before_kill": len(finished_rollouts),
    }
    print(f"\n{kill_point}: {json.dumps(OBSERVED[kill_point], default=str)}")
