"""A run killed with SIGKILL mid-rollout leaves none of its processes behind, and the re-run resumes (issue 38 §7).

`aui run --offline` runs as a real subprocess in a session of its own, on a temporary Prefect server of
its own (no `PREFECT_API_URL`: that server's `uvicorn` is one of the processes under test). Once a rollout
has ended in its final folder — its dashboard drawn, so the drawing process and multiprocessing's resource
tracker exist — while the others are in flight, the whole process tree is recorded (psutil) and only `aui`
is killed. Every recorded process must then end within `LEFT_WITHIN_S`; a zombie counts as ended (its
parent, init, reaps it). A SIGKILL runs no handler and no `atexit` in `aui`: what ends them is the watcher
`aui` starts first thing (`flows.watch_this_process`).

A terminal's Ctrl-C is gentler and reaches more: SIGINT to the whole foreground process group. The run must stop
cleanly then too, which it can only if the temporary server it reports the stop to is not in that group.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest
import yaml

from apps_prompts import load_app

ROOT = Path(__file__).resolve().parents[2]
AUI = Path(sys.executable).parent / "aui"
APP = "unit-converter"
TASKS = 3
ROUNDS = 2
LEFT_WITHIN_S = 15.0
KINDS = {  # a process of each kind must be in the recorded tree, or the test proves less than it says
    "Prefect's temporary server": "uvicorn",
    "multiprocessing's resource tracker": "multiprocessing.resource_tracker",
    "the dashboard drawing process": "multiprocessing.spawn",
    "the Playwright driver": "run-driver",
    "a Chromium renderer": "--type=renderer",
    "the watcher": "_orphans.py",
}


def _env(folder: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PREFECT_", "PYTEST_", "AUI_"))}
    env.update({
        # This test process's Prefect home (its database already made; each xdist worker has its own), and
        # no PREFECT_API_URL: `aui` starts its own temporary server, as a new user's run does.
        "PREFECT_HOME": os.environ.get("PREFECT_HOME", str(ROOT / ".prefect")),
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
        "DO_NOT_TRACK": "1",
        "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "120",
        "AUI_CACHE_DIR": str(folder / "call-cache"),
    })
    return env


def _command(folder: Path) -> list[str]:
    tasks = [task.model_dump(mode="json", exclude_none=True) for task in load_app(APP).tasks[:TASKS]]
    tasks_file = folder / "tasks.yaml"
    tasks_file.write_text(yaml.safe_dump({APP: tasks}, sort_keys=False))
    return [str(AUI), "run", "--offline", "--app", APP, "--tasks-file", str(tasks_file), "--rounds", str(ROUNDS),
            "--name", "killed", "--out", str(folder / "runs")]


def _finished_rollout(run_dir: Path) -> bool:
    """A rollout has ended in its final folder (staging folders end in `.partial`), its dashboard drawn."""
    return any(not path.parent.name.endswith(".partial") for path in run_dir.rglob("dashboard.png"))


def _wait_until(condition, seconds: float, what: str, every: float = 0.1) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"timed out after {seconds:.0f} s waiting for {what}"
        time.sleep(every)


def _command_line(process: psutil.Process) -> str:
    try:
        return " ".join(process.cmdline())
    except psutil.Error:
        return ""


def _alive(processes: list[psutil.Process]) -> list[psutil.Process]:
    """Those still running (`is_running` also tells a reused pid apart), zombies counted as ended."""
    alive = []
    for process in processes:
        try:
            if process.is_running() and process.status() != psutil.STATUS_ZOMBIE:
                alive.append(process)
        except psutil.NoSuchProcess:
            continue
    return alive


def _describe(processes: list[psutil.Process]) -> list[str]:
    return [f"{process.pid}: {_command_line(process)[:160]}" for process in processes]


@pytest.mark.timeout(1500)
def test_a_run_killed_mid_rollout_leaves_none_of_its_processes_and_the_rerun_resumes(tmp_path):
    command, env = _command(tmp_path), _env(tmp_path)
    run_dir = tmp_path / "runs" / "killed"
    log = (tmp_path / "killed.log").open("wb")
    aui = subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    tree: list[psutil.Process] = []
    try:
        # Generous: a cold start on a loaded 2-core machine took over 90 s to the first dashboard.
        _wait_until(lambda: _finished_rollout(run_dir) or aui.poll() is not None, 900, "a rollout to end")
        assert aui.poll() is None, (tmp_path / "killed.log").read_text(errors="replace")[-3000:]
        tree = psutil.Process(aui.pid).children(recursive=True)
        lines = [_command_line(process) for process in tree]
        missing = [kind for kind, needle in KINDS.items() if not any(needle in line for line in lines)]
        assert not missing, (missing, _describe(tree))
        in_flight = [path for path in run_dir.rglob("*.partial") if path.is_dir()]

        aui.send_signal(signal.SIGKILL)
        aui.wait()
        killed = time.monotonic()
        try:
            _wait_until(lambda: not _alive(tree), LEFT_WITHIN_S, "the killed run's processes to end", every=0.05)
        except AssertionError:
            raise AssertionError(f"left {LEFT_WITHIN_S:.0f} s after the kill: {_describe(_alive(tree))}") from None
        took = time.monotonic() - killed
        print(f"{len(tree)} processes, all ended {took:.2f} s after the kill; {len(in_flight)} rollouts were in flight")
    finally:
        for process in _alive(tree):  # a failed test leaves nothing behind either
            process.kill()

    # The re-run resumes: the stages that had ended before the kill are reused, and the run completes.
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    cache = json.loads((run_dir / "manifest.json").read_text())["cache"]
    assert cache["generate"] == {"ran": 0, "reused": 1}, cache
    assert cache["propose"] == {"ran": 0, "reused": 1}, cache
    assert cache["verify"]["reused"] >= 1, cache
    assert cache["rollout"]["ran"] + cache["rollout"]["reused"] == TASKS * (ROUNDS + 1), cache


@pytest.mark.timeout(900)
def test_a_terminal_ctrl_c_stops_the_run_cleanly_and_its_temporary_server_after_it(tmp_path):
    """SIGINT to `aui`'s process group, as a terminal sends it: one clean stop, no error from Prefect's services.

    Before the server had a session of its own it died with the signal; the stopping run could not report its task
    runs, waited out the 10 s grace, was killed, and printed Prefect's "EventsWorker failed to process item"."""
    command, env = _command(tmp_path), _env(tmp_path)
    log_path = tmp_path / "ctrl-c.log"
    with log_path.open("wb") as log:
        aui = subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        _wait_until(lambda: _finished_rollout(tmp_path / "runs" / "killed") or aui.poll() is not None, 900,
                    "a rollout to end")
        assert aui.poll() is None, log_path.read_text(errors="replace")[-3000:]
        [server] = [child for child in psutil.Process(aui.pid).children(recursive=True)
                    if "uvicorn" in _command_line(child)]
        os.killpg(aui.pid, signal.SIGINT)
        code = aui.wait(timeout=60)
        output = log_path.read_text(errors="replace")
    finally:
        if aui.poll() is None:
            os.killpg(aui.pid, signal.SIGKILL)
    assert code == 130 and "SIGINT received: stopped cleanly" in output, output[-3000:]
    assert "ERROR" not in output and "Traceback" not in output, output[-3000:]
    _wait_until(lambda: not _alive([server]), 10, "the temporary server to end")  # Prefect stops it at exit
