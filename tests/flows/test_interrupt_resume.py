"""Killing `aui run` mid-sweep and running it again: nothing lost, no finished rollout repeated.

The run is a real subprocess (its own PREFECT_HOME, the test harness's Prefect server), killed
with SIGKILL — process group and all, browser included — once some rollouts have finished and
while others are under way. The second run must complete the sweep, leave every rollout that
had finished untouched (same bytes, same mtime) and redo the interrupted ones cleanly: no
half-written trajectory and no stale files left anywhere.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

APPS = ["unit-converter"]  # one app (7 tasks) keeps rollouts in flight at the kill and the suite short
ROOT = Path(__file__).resolve().parents[2]
AUI = Path(sys.executable).with_name("aui")


def _trajectories(run_dir: Path) -> dict[Path, dict]:
    """Every trajectory.json under the run folder (staging folders included), parsed."""
    found = {}
    for path in run_dir.rglob("trajectory.json"):
        try:
            found[path] = json.loads(path.read_bytes())
        except (OSError, ValueError):
            found[path] = {"termination": None, "unreadable": True}
    return found


def _final_path(path: Path) -> Path:
    """Where a trajectory.json in a staging folder (`.TASK.partial`) ends up (`TASK`)."""
    folder = path.parent
    if folder.name.startswith(".") and folder.name.endswith(".partial"):
        folder = folder.with_name(folder.name[1:-len(".partial")])
    return folder / path.name


def _complete(data: dict) -> bool:
    return data.get("termination") is not None


def _env(tmp_path: Path) -> dict[str, str]:
    from prefect.settings import PREFECT_API_URL

    env = {k: v for k, v in os.environ.items() if not k.startswith(("PREFECT_", "PYTEST_"))}
    env.update({
        "PREFECT_HOME": str(tmp_path / "prefect-home"),
        "PREFECT_API_URL": PREFECT_API_URL.value(),  # the session's test-harness server
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
        "DO_NOT_TRACK": "1",
        "AUI_CACHE_DIR": str(tmp_path / "llm-cache"),
        "COLUMNS": "200",
    })
    return env


def _command(out: Path) -> list[str]:
    command = [str(AUI), "run", "--offline", "--rounds", "1", "--mode", "integrated", "--max-steps", "3",
               "--concurrency", "2", "--name", "resume", "--out", str(out)]
    for app in APPS:
        command += ["--app", app]
    return command


@pytest.mark.timeout(900)
def test_a_killed_sweep_resumes_without_repeating_finished_rollouts(tmp_path, prefect_server):
    out = tmp_path / "runs"
    run_dir = out / "resume"
    env = _env(tmp_path)
    log = (tmp_path / "first-run.log").open("wb")
    first = subprocess.Popen(_command(out), cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
                             start_new_session=True)
    try:
        deadline = time.monotonic() + 600
        while True:
            assert first.poll() is None, f"the first run ended before it could be killed: {(tmp_path / 'first-run.log').read_text()[-3000:]}"
            assert time.monotonic() < deadline, "no rollout finished within 600 s"
            found = _trajectories(run_dir)
            finished = [p for p, data in found.items() if _complete(data)]
            running = [p for p, data in found.items() if not _complete(data)]
            if len(finished) >= 3 and running:
                break
            time.sleep(0.1)
    finally:
        os.killpg(first.pid, signal.SIGKILL)  # the whole group: aui, its browser, its helpers
        first.wait(timeout=60)
        log.close()
    assert not (run_dir / "results.json").exists()

    time.sleep(0.5)  # let the dead group's last writes (none should follow SIGKILL) settle
    before = _trajectories(run_dir)
    finished_before = {p: (p.stat().st_mtime_ns, p.read_bytes()) for p, data in before.items() if _complete(data)}
    interrupted = [p for p, data in before.items() if not _complete(data)]
    assert finished_before and interrupted, (sorted(map(str, before)))

    second = subprocess.run(_command(out), cwd=ROOT, env=env, capture_output=True, timeout=700)
    assert second.returncode == 0, (second.stdout.decode()[-3000:], second.stderr.decode()[-3000:])

    payload = json.loads((run_dir / "results.json").read_text())
    assert {(a["app_id"], a["round"]) for a in payload["apps"]} == {(app, k) for app in APPS for k in (0, 1)}
    assert {row["round"] for row in payload["table"]} == {0, 1}
    referenced = {run_dir / t["trajectory"] / "trajectory.json" for a in payload["apps"] for t in a["tasks"] if t["trajectory"]}

    for path, (mtime, content) in finished_before.items():
        # A rollout that ended while its folder was still staged (dashboard not drawn yet) is
        # moved into place, not run again.
        final = _final_path(path)
        assert final.exists(), f"a finished rollout was removed: {path}"
        assert final.stat().st_mtime_ns == mtime and final.read_bytes() == content, f"a finished rollout was repeated: {path}"

    after = _trajectories(run_dir)
    assert all(_complete(data) for data in after.values()), [str(p) for p, d in after.items() if not _complete(d)]
    assert set(after) == referenced, "every trajectory on disk belongs to the results (no leftovers)"
    for path in interrupted:  # redone from the start, in place
        assert not path.exists() and _final_path(path) in referenced
    for path in referenced:  # a redone rollout is clean: only the files its trajectory names
        data = json.loads(path.read_bytes())
        expected = {"trajectory.json", "tuples.jsonl", "dashboard.png", "rollout-inputs.json", data["initial_screenshot"]}
        expected |= {step["screenshot"] for step in data["steps"] if step.get("screenshot")}
        assert {p.name for p in path.parent.iterdir()} == expected, path.parent
    leftovers = [p for p in run_dir.rglob("*") if p.name.endswith(".tmp") or ".partial" in p.name]
    assert not leftovers, leftovers
