"""The first SIGTERM or SIGINT stops `aui sweep` within 15 s, leaves no process behind and Prefect's
state consistent, saves the rollouts it cut short, and a re-run resumes.

`aui sweep` runs as a real subprocess against the scripted five-role server (`flows.testing`), as
in `test_interrupted_sweeps.py`; one kind of request hangs so the run is held at a known point:

- **starting up**: the signal lands as soon as the process handles SIGTERM at all (read from
  `/proc/PID/status`), i.e. while it still imports the CLI — before the run's own listener exists;
- **mid-rollout** (SIGTERM, and SIGINT): one rollout has ended, the other waits on its model;
- **mid-revision**: every rollout of round 0 has ended, the coder's revision is in flight.

The signal is sent directly to `aui`, or to a `timeout` wrapping it (which passes it on), as a
user or a scheduler would. Every process the run starts inherits a marker in its environment,
which is how leftovers are found in /proc. Prefect's state is read from the test harness's API,
the one the subprocess reported to. The re-run must do less than a run from scratch: every
rollout that had ended is kept as it was, and no model request answered before the stop is sent
again (the one cut off is).
"""

from __future__ import annotations

import datetime
import json
import os
import signal
import subprocess
import time
import uuid
from collections import Counter
from pathlib import Path

import pytest

from cua import Trajectory
from flows.testing import ScriptedRoles
from llm.testing import ScriptedOpenAIServer
from tests.reliability.test_interrupted_sweeps import (
    AUI,
    APP,
    KILL_POINTS,
    ROOT,
    TASKS,
    Script,
    _env,
    _text_bodies,
    _write_config,
    clicks,  # noqa: F401 - the module's fixture: where UI-TARS clicks on the app
)

STOP_BUDGET_S = 15.0
MARKER = "AUI_STOP_TEST"
RESUME_LINE = "run the same command again to resume"
UNFINISHED = {"RUNNING", "PENDING", "SCHEDULED", "PAUSED", "CANCELLING"}


def _marked_processes(marker: str) -> list[int]:
    """Pids whose environment holds `MARKER=marker` (the run's processes and whatever they started)."""
    needle = f"{MARKER}={marker}".encode()
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            if needle in Path("/proc", name, "environ").read_bytes():
                stat = Path("/proc", name, "stat").read_text()
                if stat.rsplit(")", 1)[1].split()[0] not in ("Z", "X"):
                    found.append(int(name))
        except OSError:
            continue
    return found


def _children(pid: int) -> list[int]:
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                if int(Path("/proc", name, "stat").read_text().rsplit(")", 1)[1].split()[1]) == pid:
                    found.append(int(name))
            except (OSError, ValueError, IndexError):
                continue
    return found


def _handles_sigterm(pid: int) -> bool:
    """Whether `pid` runs Python and has a handler for SIGTERM (Python installs none by default; `aui run|sweep`
    does first thing). Python, not the `timeout` it was forked from: between the fork and the exec the child is
    still `timeout`, whose SIGTERM handler it inherits (a signal sent then killed it before `aui` could say a word)."""
    try:
        if not Path(os.readlink(f"/proc/{pid}/exe")).name.startswith("python"):
            return False
        for line in Path("/proc", str(pid), "status").read_text().splitlines():
            if line.startswith("SigCgt:"):
                return bool(int(line.split()[1], 16) & (1 << (signal.SIGTERM - 1)))
    except OSError:
        pass
    return False


def _start(config: Path, folder: Path, marker: str, via_timeout: bool) -> subprocess.Popen:
    env = {**_env(folder), MARKER: marker}
    command = [str(AUI), "sweep", str(config)]
    if via_timeout:
        command = ["timeout", "600", *command]  # `timeout` passes the SIGTERM it gets on to `aui`
    log = (folder / f"run-{marker[:8]}.log").open("wb")
    return subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)


def _wait_until(condition, seconds: float, what: str, every: float = 0.1) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(every)


def _aui_process(process: subprocess.Popen, via_timeout: bool) -> int:
    """The pid of `aui` itself (the child of `timeout` when it runs under one)."""
    if not via_timeout:
        return process.pid
    _wait_until(lambda: _children(process.pid), 30, "`timeout` to start `aui`", every=0.002)
    return _children(process.pid)[0]


def _prefect_runs_since(since: datetime.datetime) -> tuple[list, list]:
    """The flow runs created since `since` in the test harness's Prefect API, and all their task runs."""
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import TaskRunFilter, TaskRunFilterFlowRunId
    from prefect.client.schemas.sorting import FlowRunSort

    with get_client(sync_client=True) as client:
        latest = client.read_flow_runs(sort=FlowRunSort.EXPECTED_START_TIME_DESC, limit=200)
        flow_runs = [run for run in latest if run.created and run.created >= since]
        ids = [run.id for run in flow_runs]
        task_runs = []
        while ids:
            page = client.read_task_runs(task_run_filter=TaskRunFilter(flow_run_id=TaskRunFilterFlowRunId(any_=ids)),
                                         limit=200, offset=len(task_runs))
            task_runs += page
            if len(page) < 200:
                break
    return flow_runs, task_runs


def _left_unfinished(since: datetime.datetime) -> list[str]:
    flow_runs, task_runs = _prefect_runs_since(since)
    return [f"{kind} {run.name}: {run.state_type.value if run.state_type else None}"
            for kind, runs in (("flow run", flow_runs), ("task run", task_runs)) for run in runs
            if run.state_type is None or run.state_type.value in UNFINISHED]


def _cut_short(run_dir: Path) -> list[Trajectory]:
    """Trajectories the stop cut short: saved, in a rollout's staging folder, marked cancelled."""
    found = []
    for path in run_dir.rglob("trajectory.json"):
        if path.parent.name.endswith(".partial"):
            trajectory = Trajectory.load(path.parent)
            if trajectory.cancelled:
                found.append(trajectory)
    return found


def _finished_rollouts(run_dir: Path) -> dict[Path, tuple[int, bytes]]:
    """Rollouts in their final folders (ended, dashboard drawn): trajectory.json → (mtime, content)."""
    return {path: (path.stat().st_mtime_ns, path.read_bytes()) for path in run_dir.rglob("trajectory.json")
            if not path.parent.name.endswith(".partial")}


POINTS = {  # point → (signal, through `timeout`)
    "starting up": (signal.SIGTERM, True),
    "mid-rollout": (signal.SIGTERM, False),
    "mid-rollout, SIGINT": (signal.SIGINT, False),
    "mid-revision": (signal.SIGTERM, True),
}


@pytest.mark.timeout(900)
@pytest.mark.parametrize("point", list(POINTS))
def test_the_first_sigterm_stops_the_run_in_bounded_time_and_a_rerun_resumes(tmp_path, prefect_server, clicks, point):
    signum, via_timeout = POINTS[point]
    roles = ScriptedRoles(APP, TASKS, clicks=clicks)
    hang, ready = (None, None) if point == "starting up" else KILL_POINTS[point.split(",")[0]](roles)
    script = Script(roles, hang)
    run_dir = tmp_path / "runs" / "interrupted"
    with ScriptedOpenAIServer(script) as server:
        config = _write_config(tmp_path, roles, server)
        marker = uuid.uuid4().hex
        since = datetime.datetime.now(datetime.timezone.utc)
        process = _start(config, tmp_path, marker, via_timeout)
        if point == "starting up":
            # As soon as `aui` handles SIGTERM at all: it is still importing the CLI (about a
            # second), long before the run's listener is installed or anything runs.
            aui = _aui_process(process, via_timeout)
            _wait_until(lambda: _handles_sigterm(aui) or process.poll() is not None, 30,
                        "`aui` to handle SIGTERM", every=0.002)
        else:
            # (and a rollout has ended in its final folder, dashboard drawn)
            _wait_until(lambda: (ready(script, run_dir) and _finished_rollouts(run_dir)) or process.poll() is not None,
                        300, f"a request {point}")
        assert process.poll() is None, f"the run ended before {point}"
        signalled = time.monotonic()
        os.kill(process.pid, signum)
        try:
            code = process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            raise AssertionError(f"the run did not stop within 60 s of {signum.name} ({point})") from None
        took = time.monotonic() - signalled
        log = next(tmp_path.glob("run-*.log")).read_text(errors="replace")
        assert took <= STOP_BUDGET_S, (point, took, log[-2000:])
        assert code != 0, log[-2000:]
        assert sum(RESUME_LINE in line for line in log.splitlines()) == 1, log[-2000:]
        assert "Traceback" not in log, log[-3000:]
        _wait_until(lambda: not _marked_processes(marker), 5, f"the run's processes to end: {_marked_processes(marker)}")

        if point == "starting up":
            # Stopped before anything ran: no model request, no run folder, no flow run in Prefect.
            assert "not started" in log and "while it was starting up" in log and not server.requests, log[-2000:]
            assert not run_dir.exists() and not _prefect_runs_since(since)[0]
            return
        first_requests = list(server.requests)
        in_flight = list(script.hung)

        # The rollout cut short is kept, marked cancelled; one that had ended is in its final folder.
        cut_short = _cut_short(run_dir)
        finished_before = _finished_rollouts(run_dir)
        if point.startswith("mid-rollout"):
            miles = next(t.description for t in roles.tasks if t.id == "miles-to-km")
            assert [t.task for t in cut_short] == [miles], [t.task for t in cut_short]
            assert cut_short[0].error == "cancelled" and cut_short[0].termination.value == "error"
        assert finished_before, "a rollout had ended before the stop"
        # Prefect's state is consistent: nothing of this run is left running or pending (crashed
        # or cancelled is fine). The API records task runs' states from events, a moment later.
        left: list[str] = []

        def settled() -> bool:
            left[:] = _left_unfinished(since)
            return not left
        try:
            _wait_until(settled, 20, "Prefect's runs to be final", every=0.5)
        except AssertionError:
            raise AssertionError(f"{point}: left unfinished in Prefect: {left}") from None
        flow_runs, task_runs = _prefect_runs_since(since)
        assert flow_runs and task_runs, "the stopped run is in Prefect"
        states = Counter(run.state_type.value for run in (*flow_runs, *task_runs))

        script.hanging = False  # the re-run is answered at once
        rerun_started = time.time_ns()
        again = subprocess.run([str(AUI), "sweep", str(config)], cwd=ROOT, env=_env(tmp_path), capture_output=True,
                               timeout=600)
        rerun_requests = list(server.requests)[len(first_requests):]
    assert again.returncode == 0, (again.stdout.decode()[-3000:], again.stderr.decode()[-3000:])
    payload = json.loads((run_dir / "results.json").read_text())
    assert sorted(a["round"] for a in payload["apps"]) == [0, 1] and all(a["tasks"] for a in payload["apps"])
    assert not list((tmp_path / "runs").rglob("*.partial")), "the partial rollout was cleared and done again"
    # The re-run resumed: it did less than a run from scratch. Every rollout that had ended was
    # kept as it was (not rolled out again); no answered request reached the model again.
    after = _finished_rollouts(run_dir)
    kept = [path for path, seen in finished_before.items() if after.get(path) == seen]
    done_by_rerun = [path for path, (mtime, _) in after.items() if mtime >= rerun_started]  # round 1's included
    assert kept == list(finished_before), "a rollout that had ended was rolled out again"
    assert len(done_by_rerun) < len(after), (len(done_by_rerun), len(after))  # a run from scratch does them all
    answered = [r for r in first_requests if not any(r is h for h in in_flight)]
    repeated = set(_text_bodies(answered)) & set(_text_bodies(rerun_requests))
    assert not repeated, f"{len(repeated)} answered request(s) sent again, e.g. {next(iter(repeated))[:300]}"
    assert set(_text_bodies(in_flight)) <= set(_text_bodies(rerun_requests)), "the request cut off is sent again"
    # A run from scratch sends every request the two runs sent between them (none was sent twice):
    # the re-run skipped the answered ones.
    assert _text_bodies(answered), "the stopped run had answers to keep"
    print(f"\n{point}: stopped in {took:.1f} s; rollouts kept {len(kept)}, done by the re-run {len(done_by_rerun)} of {len(after)}; "
          f"model requests: answered before the stop {len(answered)}, sent by the re-run {len(rerun_requests)}; "
          f"Prefect after the stop: {dict(states)}")
