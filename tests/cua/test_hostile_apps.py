"""Hostile apps: every rollout ends in time with the right reason and a saved trajectory, the
worker's browser recovers, and nothing the app tries leaves the machine."""

from __future__ import annotations

import asyncio
import os
import signal
import time

import pytest

from cua import (Action, Observation, Point, Policy, PolicyDecision, RolloutConfig, TerminationReason, Trajectory,
                 close_warm_pages, rollout)
from cua._processes import MARKER_SWITCH, descendants
from cua.policies import get_policy
from verifier import rollout_checker
from tests.cua.hostile_apps import BUTTON, HOSTILE_APPS, TINY, TINY_CHECKER, HostileApp

# The episode limit covers loading and every step; closing the context afterwards is bounded
# separately (10 s). The rest is slack for a loaded 2-core machine: an upper bound, not a target.
CLOSE_MARGIN_S = 15.0
RECOVERY = RolloutConfig(max_steps=3, step_timeout_s=20, episode_timeout_s=40)


def click(xy) -> Action:
    return Action(kind="click", point=Point(x=xy[0], y=xy[1]))


async def assert_worker_recovers(folder) -> None:
    """The next rollout on the same worker (same browser, or its replacement) succeeds."""
    policy = get_policy("scripted", script=[click(BUTTON)])
    trajectory = await rollout(TINY, "Press Go", policy, rollout_checker(TINY_CHECKER), folder, RECOVERY)
    assert trajectory.termination == TerminationReason.success, (trajectory.termination, trajectory.error)


@pytest.mark.parametrize("app", HOSTILE_APPS, ids=lambda app: app.name)
async def test_hostile_app_is_contained(app: HostileApp, tmp_path, canary):
    config = RolloutConfig(max_steps=4, step_timeout_s=app.step_timeout_s, episode_timeout_s=app.episode_timeout_s)
    policy = get_policy("scripted", script=[click(xy) for xy in app.clicks])
    folder = tmp_path / app.name

    started = time.monotonic()
    trajectory = await rollout(app.html_for(canary.address), "Press Go", policy, rollout_checker(app.checker), folder, config)
    elapsed = time.monotonic() - started

    # Ends within its episode limit, with the right reason, and the (partial) record is on disk.
    assert elapsed < config.episode_timeout_s + CLOSE_MARGIN_S
    assert trajectory.termination == TerminationReason(app.termination), (trajectory.termination, trajectory.error)
    saved = Trajectory.load(folder)
    assert saved.termination == trajectory.termination and saved.error == trajectory.error
    assert len(saved.steps) == len(trajectory.steps)
    if trajectory.termination == TerminationReason.timeout:
        assert "exceeded" in trajectory.error

    # What the app tried is in the record; nothing reached the listener standing in for the internet.
    for method, resource_type, prefix in app.must_block:
        prefix = prefix.replace("__CANARY__", canary.address)
        assert any(
            r.method == method and (resource_type is None or r.resource_type == resource_type) and r.url.startswith(prefix)
            for r in saved.blocked_requests
        ), f"no blocked {method} {resource_type} {prefix} in {[(r.method, r.resource_type, r.url) for r in saved.blocked_requests]}"
    assert not any(r.url.startswith("http://aui-app.localhost/") for r in saved.blocked_requests)
    assert len(saved.dialogs) >= app.min_dialogs
    assert set(app.dialog_kinds) <= {d.kind for d in saved.dialogs}
    assert saved.popups_closed >= app.min_popups
    if app.page_error:
        assert any(app.page_error in error for error in saved.page_errors), saved.page_errors

    await assert_worker_recovers(tmp_path / "after")
    await assert_no_renderer_left_behind()
    assert canary.hits == []  # checked last: WebRTC keeps trying for a while


async def test_every_kind_of_exfiltration_is_logged(tmp_path, canary):
    # The network page spells out each kind; this names them, so a missing kind reads clearly.
    app = next(a for a in HOSTILE_APPS if a.name == "network_exfiltration")
    config = RolloutConfig(max_steps=2, step_timeout_s=10, episode_timeout_s=25)
    policy = get_policy("scripted", script=[click(BUTTON)])
    trajectory = await rollout(app.html_for(canary.address), "Press Go", policy, rollout_checker(app.checker), tmp_path, config)
    kinds = {
        "fetch": ("POST", "fetch", "https://fetch.evil.example/"),
        "xhr": ("GET", "xhr", "https://xhr.evil.example/"),
        "image": ("GET", "image", "https://img.evil.example/"),
        "websocket": ("WEBSOCKET", "websocket", "wss://ws.evil.example/"),
        "form post": ("POST", "document", "https://form.evil.example/"),
        "redirect": ("GET", "document", "https://redirect.evil.example/"),
    }
    logged = {(r.method, r.resource_type, r.url) for r in trajectory.blocked_requests}
    missing = [kind for kind, (method, rtype, prefix) in kinds.items()
               if not any(m == method and t == rtype and u.startswith(prefix) for m, t, u in logged)]
    assert missing == []
    # The redirect was answered locally: the agent is still on the app, which counted the click.
    assert trajectory.termination == TerminationReason.success
    assert canary.hits == []


async def test_floods_are_capped_not_lost(tmp_path):
    app = next(a for a in HOSTILE_APPS if a.name == "request_flood")
    config = RolloutConfig(max_steps=3, step_timeout_s=10, episode_timeout_s=25)
    policy = get_policy("scripted", script=[Action(kind="wait"), click(BUTTON)])
    trajectory = await rollout(app.html, "Press Go", policy, rollout_checker(app.checker), tmp_path, config)
    assert trajectory.termination == TerminationReason.success
    assert len(trajectory.blocked_requests) == 300  # the cap; the rest are counted, not listed
    notes = " ".join(trajectory.page_errors)
    assert "more blocked requests not listed" in notes and "more page errors not listed" in notes
    assert (tmp_path / "trajectory.json").stat().st_size < 400_000


async def assert_no_renderer_left_behind(limit: int = 3, wait_s: float = 15.0) -> None:
    """No rollout's renderer outlives its context (Chromium keeps a spare one; one may be exiting) once the
    idle warm pages are closed too (a reused page keeps its renderer on purpose: cua._browser)."""
    await close_warm_pages()
    deadline = time.monotonic() + wait_s
    while len(renderers := _our_processes(lambda c: b"--type=renderer" in c)) > limit and time.monotonic() < deadline:
        await asyncio.sleep(0.25)
    assert len(renderers) <= limit, f"{len(renderers)} renderer processes still alive"


# -- the worker's browser itself dies --------------------------------------------------------------


def _our_processes(predicate) -> list[int]:
    found = []
    for pid in descendants(os.getpid()):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as handle:
                command = handle.read()
        except OSError:
            continue
        if predicate(command):
            found.append(pid)
    return found


def _browser_pids() -> list[int]:
    return _our_processes(lambda c: MARKER_SWITCH.encode() in c and b"--type=" not in c)


def _driver_pids() -> list[int]:
    return _our_processes(lambda c: b"run-driver" in c)


class _Killer(Policy):
    """Signals a process of the worker during its first decision, then clicks as if nothing happened."""

    name = "killer"
    offline = True

    def __init__(self, find, signal_number=signal.SIGKILL):
        self.find = find
        self.signal_number = signal_number
        self.killed: list[int] = []

    @property
    def coordinate_space(self) -> str:
        return "screen"

    async def act(self, observation: Observation) -> PolicyDecision:
        if not self.killed:
            self.killed = self.find()
            for pid in self.killed:
                os.kill(pid, self.signal_number)
            await asyncio.sleep(0.5)
        return PolicyDecision(actions=[click(BUTTON)])


@pytest.mark.parametrize("victim", ["browser", "driver"])
async def test_worker_recovers_when_its_browser_or_driver_dies_mid_rollout(victim, tmp_path):
    killer = _Killer(_browser_pids if victim == "browser" else _driver_pids)
    config = RolloutConfig(max_steps=3, step_timeout_s=15, episode_timeout_s=30)
    trajectory = await rollout(TINY, "Press Go", killer, rollout_checker(TINY_CHECKER), tmp_path / "dies", config)
    assert killer.killed, f"no {victim} process found to kill"
    assert trajectory.termination == TerminationReason.error
    assert Trajectory.load(tmp_path / "dies").termination == TerminationReason.error
    for attempt in range(2):  # relaunched once, then simply used
        await assert_worker_recovers(tmp_path / f"after{attempt}")
    for _ in range(40):  # the dead one is gone (a browser orphaned by its driver exits by itself)
        if len(_browser_pids()) == 1:
            break
        await asyncio.sleep(0.25)
    assert len(_browser_pids()) == 1


async def test_a_browser_that_stops_answering_is_killed_and_replaced(tmp_path, monkeypatch):
    import cua._launch as launch

    # Shorter bounds on talking to the browser, so the test does not wait out the real ones.
    for name, seconds in (("CLOSE_TIMEOUT_S", 3.0), ("HEALTH_TIMEOUT_S", 3.0), ("BROWSER_CLOSE_TIMEOUT_S", 3.0)):
        monkeypatch.setattr(launch, name, seconds)
    frozen = _Killer(_browser_pids, signal.SIGSTOP)  # the browser process hangs: alive, answering nothing
    config = RolloutConfig(max_steps=3, step_timeout_s=5, episode_timeout_s=15)
    started = time.monotonic()
    trajectory = await rollout(TINY, "Press Go", frozen, rollout_checker(TINY_CHECKER), tmp_path / "hangs", config)
    assert frozen.killed
    assert time.monotonic() - started < config.episode_timeout_s + CLOSE_MARGIN_S
    assert trajectory.termination == TerminationReason.timeout, (trajectory.termination, trajectory.error)
    await assert_worker_recovers(tmp_path / "after")
    assert all(pid not in _browser_pids() for pid in frozen.killed)  # the hung browser was killed, not left behind
