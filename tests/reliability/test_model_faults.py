"""Model faults through the real `openai` client, against a local fault-injecting OpenAI-protocol server.

Every role (coder, proposer, verifier, UI-TARS, commenter) is played by `flows.testing.ScriptedRoles`
behind `FaultInjector`, which turns requests into faults by a fixed schedule over request
counts (never the clock), drawing on the kinds a real endpoint produces:

- transport faults, which the client retries: 429 with `Retry-After` and without, 500, 503, a
  connection reset, a reply slower than the client's per-attempt timeout, a 200 whose body is
  not JSON;
- content faults, which each role repairs within its own bound: the coder's HTML cut off before
  `</html>`, invalid JSON from the proposer, verifier and commenter, UI-TARS text with a Thought
  and no Action; and an empty reply.

A sweep with 30% of its requests failing this way must complete, account for every task of every
app/round (a result, or an explicit error), and keep every retry within its bound (counted by
`llm.call_stats()` and by the server). Then, one role at a time, *every* attempt fails: the sweep
still completes, the stage's error is recorded in results.json for the rounds and tasks it
touched, and the number of attempts is exactly the retry budget.
"""

from __future__ import annotations

import json
import threading
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from experiment import make_config
from flows import MODEL_RETRIES, sweep
from flows.testing import ONLINE_ROLES, ROLE_MARKERS, ScriptedRoles, click_point, role_of, user_text
from llm import call_stats, reset_call_stats
from llm.testing import (
    RecordedRequest,
    Reply,
    ScriptedOpenAIServer,
    reply_hang,
    reply_malformed,
    reply_reset,
    reply_status,
    reply_text,
)

APP = "unit-converter"
ROUNDS = 3
TASK_IDS = ["swap-to-feet-metres", "miles-to-km"]
TIMEOUT_S = 3.0
MAX_RETRIES = 2
STAGE_RETRIES = MODEL_RETRIES["retries"]
"""Prefect's retries of a model stage that raised (each stage run has its own client retries)."""

TRANSPORT_FAULTS = ("429+retry-after", "429", "500", "503", "reset", "slow", "body-not-json")


def write_registry(server: ScriptedOpenAIServer, path: Path) -> Path:
    """Every role on one `scripted` model with a short per-attempt timeout and two retries."""
    path.write_text(yaml.safe_dump({
        "roles": {role: "scripted" for role in ("coder", "proposer", "verifier", "commenter", "cua")},
        "models": [
            {"name": "scripted", "provider": "openai-compatible", "model": "scripted-model",
             "base_url": server.base_url, "api_key": "sk-scripted", "timeout_s": TIMEOUT_S, "max_retries": MAX_RETRIES,
             "prices": {"input_usd_per_1m": 1.0, "output_usd_per_1m": 2.0}},
            {"name": "offline", "provider": "offline"},
        ],
    }), encoding="utf-8")
    return path


class FaultInjector:
    """A server script: `roles` answers, except where `schedule(n, request)` names a fault kind.

    `n` is the request's arrival number (1-based, over all roles). Every injected fault is logged
    as (n, role, kind), so the test can count what it scheduled.
    """

    def __init__(self, roles: ScriptedRoles, schedule: Callable[[int, RecordedRequest], str | None]):
        self.roles = roles
        self.schedule = schedule
        self.log: list[tuple[int, str, str]] = []
        self.seen = 0
        self._lock = threading.Lock()

    def __call__(self, request: RecordedRequest) -> Reply:
        with self._lock:
            self.seen += 1
            number = self.seen
            kind = self.schedule(number, request)
            role = role_of(request)
            if kind is not None:
                self.log.append((number, role, kind))
        if kind is None:
            return self.roles(request)
        return self.fault(kind, role)

    def fault(self, kind: str, role: str) -> Reply:
        if kind == "429+retry-after":
            return reply_status(429, retry_after=0.1, message="rate limited (scripted)")
        if kind == "429":
            return reply_status(429, message="rate limited (scripted)")
        if kind in ("500", "503"):
            return reply_status(int(kind))
        if kind == "reset":
            return reply_reset()
        if kind == "slow":
            return reply_hang(TIMEOUT_S + 2)
        if kind == "body-not-json":
            return reply_malformed()
        if kind == "empty":
            return reply_text("")
        if kind == "bad-content":
            return self.bad_content(role)
        raise AssertionError(f"unknown fault kind {kind}")

    def bad_content(self, role: str) -> Reply:
        if role == "coder":
            html = self.roles.html
            return reply_text(f"```html\n{html[: len(html) // 2]}")  # cut off before </html>
        if role == "uitars":
            return reply_text("Thought: The form is on the left and the button I need is right below it.")
        if role == "proposer":
            return reply_text('{"tasks": [{"description": "Convert 5 miles to kilome')
        if role == "verifier":
            return reply_text('```json\n{"verdicts": [{"task_id": "swap", "solvable": tru\n```')
        return reply_text('{"issues": ["The agent stopped", "actionable_changes": [')

    def counts(self) -> Counter:
        return Counter(kind for _, _, kind in self.log)

    def by_role(self) -> Counter:
        return Counter(role for _, role, _ in self.log)


FAULTY = {1, 4, 7}
"""A role's k-th request fails when k % 10 is one of these: 30%, and every role's first request."""
OTHER_KINDS = ("429+retry-after", "empty", "500", "reset", "429", "slow", "503", "body-not-json")


def thirty_percent_per_role() -> Callable[[int, RecordedRequest], str | None]:
    """Each role's requests are counted apart; its 1st, 4th, 7th, 11th, ... fail.

    A role's first fault is its own kind of bad content (so every role's repair path runs);
    the others take turns through OTHER_KINDS, counted over all roles.
    """
    requests: Counter = Counter()
    faulted: Counter = Counter()
    others = 0

    def schedule(number: int, request: RecordedRequest) -> str | None:
        nonlocal others
        role = role_of(request)
        requests[role] += 1
        if requests[role] % 10 not in FAULTY:
            return None
        faulted[role] += 1
        if faulted[role] == 1:
            return "bad-content"
        kind = OTHER_KINDS[others % len(OTHER_KINDS)]
        others += 1
        return kind

    return schedule


def scheduled_faults(requests_per_role: Counter) -> int:
    return sum(sum(1 for k in range(1, n + 1) if k % 10 in FAULTY) for n in requests_per_role.values())


def sweep_config(tmp_path: Path, models: Path, rounds: int, modes: tuple[str, ...] = ("integrated",)):
    return make_config({
        "name": "faults", "app_ids": [APP], "rounds": rounds, "revision_modes": list(modes), **ONLINE_ROLES,
        "tasks_per_app": 3, "max_steps": 3, "out_dir": str(tmp_path / "runs"), "models_config": str(models),
    })


def assert_every_task_accounted(config, results, rounds: int) -> dict:
    """results.json exists and holds rounds 0..R of every track; each proposed task has an outcome or a reason."""
    payload = json.loads((config.run_dir / "results.json").read_text())
    assert [r.model_dump() for r in results] == payload["apps"]
    tracks = {(mode, cua) for mode in config.revision_modes for cua in config.cua_policies}
    for mode, cua in tracks:
        assert [r["round"] for r in payload["apps"] if (r["mode"], r["cua"]) == (mode, cua)] == list(range(rounds + 1))
    assert len(payload["apps"]) == len(tracks) * (rounds + 1)
    tasks_file = config.run_dir / "apps" / APP / "tasks-scripted.json"
    proposed = [t["id"] for t in json.loads(tasks_file.read_text())] if tasks_file.exists() else []
    for app_round in payload["apps"]:
        where = f"{app_round['app_id']} {app_round['mode']} round {app_round['round']}"
        if not proposed:  # no task list at all: the round must say why
            assert app_round["tasks"] == [] and app_round["errors"], where
            continue
        assert [t["task_id"] for t in app_round["tasks"]] == proposed, where
        for task in app_round["tasks"]:
            ran = task["termination"] is not None
            assert ran or task["reason"], f"{where}: task {task['task_id']} has neither a result nor a reason"
            if task["checker_valid"] and not ran:
                assert task["reason"], f"{where}: task {task['task_id']} had a checker but no rollout and no reason"
    return payload


def assert_retries_bounded(server: ScriptedOpenAIServer) -> None:
    stats = call_stats()
    assert stats.attempts == len(server.requests), (stats, len(server.requests))
    assert stats.attempts == stats.calls + stats.retries, stats
    assert stats.retries <= MAX_RETRIES * stats.calls, stats
    assert stats.cache_hits == 0, stats


@pytest.mark.timeout(900)
async def test_a_sweep_with_30_percent_of_model_calls_failing_completes_and_accounts_for_every_task(
        tmp_path, prefect_server, monkeypatch):
    monkeypatch.setenv("AUI_LLM_CACHE", "off")  # only real calls: every attempt reaches the server
    roles = ScriptedRoles(APP, TASK_IDS, clicks={"swap-to-feet-metres": await click_point(APP, "#swap")})
    injector = FaultInjector(roles, thirty_percent_per_role())
    with ScriptedOpenAIServer(injector) as server:
        # Two revision modes share round 0 and revise apart for three rounds: enough requests for
        # every fault kind to come up at least once (it takes 5 + 8 faults).
        config = sweep_config(tmp_path, write_registry(server, tmp_path / "models.yaml"), rounds=ROUNDS,
                              modes=("integrated", "cua"))
        reset_call_stats()

        results = await sweep(config)

        stats = call_stats()
        seen = Counter(role_of(r) for r in server.requests)
        print(f"\nrequests {len(server.requests)} by role {dict(seen)}; faults {len(injector.log)} "
              f"{dict(injector.counts())} by role {dict(injector.by_role())}; {stats}")
        assert seen["unknown"] == 0
        payload = assert_every_task_accounted(config, results, rounds=ROUNDS)
        assert_retries_bounded(server)
        # What was scheduled is what happened: 3 in every 10 requests of each role, every kind at
        # least once, and every role's own bad content.
        assert len(injector.log) == scheduled_faults(seen)
        assert 0.25 <= len(injector.log) / len(server.requests) <= 0.4
        assert set(injector.counts()) == {"bad-content", *OTHER_KINDS}, injector.counts()
        # no german here, no task a judge must judge, no defects feedback: no translator, judge or detector calls
        assert {role for _, role, kind in injector.log if kind == "bad-content"} == set(ROLE_MARKERS) - {
            "translator", "judge", "detector"}
        # Every transport fault cost one retry and no call ran out of them (more retries than that
        # would be attempts timing out on an overloaded machine); content faults are repaired by
        # the roles themselves, as new calls.
        transport = sum(injector.counts()[k] for k in TRANSPORT_FAULTS)
        assert stats.failures == 0 and stats.retries >= transport, (stats, transport)
        assert all(not r["errors"] for r in payload["apps"]), [r["errors"] for r in payload["apps"]]
        assert payload["usage"]["calls"]["attempts"] == stats.attempts


def is_revision(request: RecordedRequest) -> bool:
    return role_of(request) == "coder" and "You wrote this" in user_text(request)


ALWAYS_FAILING = {
    # name: (which requests always fail, the fault they get)
    "proposer": (lambda r: role_of(r) == "proposer", "503"),
    "first-version": (lambda r: role_of(r) == "coder" and not is_revision(r), "500"),
    "verifier": (lambda r: role_of(r) == "verifier", "429+retry-after"),
    "cua+commenter+revision": (lambda r: role_of(r) in ("uitars", "commenter") or is_revision(r), "503"),
}


def always(name: str) -> Callable[[int, RecordedRequest], str | None]:
    matches, kind = ALWAYS_FAILING[name]
    return lambda number, request: kind if matches(request) else None


class QuickFaults(FaultInjector):
    """Status faults with a short `Retry-After`, so a call that fails every attempt fails fast."""

    def fault(self, kind: str, role: str) -> Reply:
        if kind in ("500", "503"):
            return reply_status(int(kind), retry_after=0.05)
        return super().fault(kind, role)


@pytest.mark.timeout(900)
@pytest.mark.parametrize("failing", list(ALWAYS_FAILING))
async def test_a_stage_whose_every_attempt_fails_is_recorded_as_an_error_not_a_crashed_sweep(
        tmp_path, prefect_server, monkeypatch, failing):
    monkeypatch.setenv("AUI_LLM_CACHE", "off")
    roles = ScriptedRoles(APP, TASK_IDS, clicks={"swap-to-feet-metres": await click_point(APP, "#swap")})
    injector = QuickFaults(roles, always(failing))
    with ScriptedOpenAIServer(injector) as server:
        config = sweep_config(tmp_path, write_registry(server, tmp_path / "models.yaml"), rounds=1)
        reset_call_stats()

        results = await sweep(config)

        seen = Counter(role_of(r) for r in server.requests)
        # Calls of the roles that are answered, each once whatever the client retried: a 3 s attempt limit on a
        # loaded machine can time an answered call out and send it again (the failing roles' counts are exact:
        # every attempt of theirs fails, however it fails).
        answered = Counter(role_of(r) for r in server.distinct_requests())
        stats = call_stats()
        print(f"\n{failing}: requests {dict(seen)}; faults {dict(injector.by_role())}; {stats}")
        payload = assert_every_task_accounted(config, results, rounds=1)
        assert_retries_bounded(server)
        # Each stage run makes its call once plus MAX_RETRIES retries; Prefect runs a raising stage
        # 1 + STAGE_RETRIES times. That is the whole budget of a call that never succeeds.
        per_stage = (STAGE_RETRIES + 1) * (MAX_RETRIES + 1)
        assert stats.failures * (MAX_RETRIES + 1) == len(injector.log), (stats, len(injector.log))
        rounds = payload["apps"]
        if failing == "proposer":
            assert seen["proposer"] == per_stage and answered["coder"] == 1
            assert all(r["tasks"] == [] and "proposing tasks failed" in r["errors"][0] for r in rounds)
        elif failing == "first-version":
            assert seen["coder"] == per_stage and seen["verifier"] == seen["uitars"] == 0
            for r in rounds:
                assert "generating the first version failed" in r["errors"][0] and "HTTP 500" in r["errors"][0]
                assert len(r["tasks"]) == 3 and all("HTTP 500" in t["reason"] for t in r["tasks"])
        elif failing == "verifier":
            assert seen["verifier"] == 2 * per_stage and seen["uitars"] == seen["commenter"] == 0
            assert answered["coder"] == 1  # no revision without verdicts
            for r in rounds:
                assert any("verifying round" in e and "HTTP 429" in e for e in r["errors"]), r["errors"]
                assert all(not t["checker_valid"] and "HTTP 429" in t["reason"] for t in r["tasks"])
            assert "keeps the round-0 version" in " ".join(rounds[1]["errors"])
            assert rounds[1]["html"] != rounds[0]["html"] and rounds[1]["html_sha"] == rounds[0]["html_sha"]
        else:
            for r in rounds:
                ran = [t for t in r["tasks"] if t["checker_valid"]]
                assert len(ran) == 2 and all(t["termination"] == "error" and "HTTP 503" in t["reason"] for t in ran), ran
            assert seen["uitars"] == 2 * 2 * (MAX_RETRIES + 1)  # two rollouts a round, each one failed call
            assert seen["commenter"] == 2 * (MAX_RETRIES + 1)  # both failed rollouts of round 0
            assert "revising to round 1 failed" in " ".join(rounds[1]["errors"])
            assert "commenting on round 0: 2 comment(s) failed" in " ".join(rounds[1]["errors"])
            assert rounds[1]["html_sha"] == rounds[0]["html_sha"]


def test_stage_errors_survive_pickling_across_processes():
    """A stage's error crosses process boundaries (Dask workers) and must keep its fields to be
    recognised as a model fault there, not turn into an unpickling error."""
    import pickle

    from coder import HtmlExtractionError
    from llm import ModelCallError

    call = pickle.loads(pickle.dumps(ModelCallError("gone", model="m", endpoint="http://e", status=503, attempts=3,
                                                    retryable=True)))
    assert (type(call), str(call), call.model, call.endpoint, call.status, call.attempts, call.retryable) == (
        ModelCallError, "gone", "m", "http://e", 503, 3, True)
    cut = pickle.loads(pickle.dumps(HtmlExtractionError("cut off", model="m", truncated=True, excerpt="<div")))
    assert (type(cut), str(cut), cut.model, cut.truncated, cut.excerpt) == (HtmlExtractionError, "cut off", "m", True, "<div")


async def test_a_refused_request_is_not_retried_by_the_stage_but_a_rate_limit_is(prefect_server):
    # Prefect's stage retries come on top of the client's: a 401 fails the same way every time.
    from prefect import flow as prefect_flow
    from prefect import task as prefect_task

    from coder import CoderError, HtmlExtractionError
    from llm import ModelCallError

    attempts = {"refused": 0, "limited": 0, "no-html": 0}

    @prefect_task(**{**MODEL_RETRIES, "retry_delay_seconds": 0})
    def call(kind: str) -> None:
        attempts[kind] += 1
        if kind == "no-html":  # the coder already re-asked with a nudge; a stage retry would replay it
            raise HtmlExtractionError("no HTML in the reply", model="m", truncated=False, excerpt="Sure!")
        raise ModelCallError(f"{kind} call failed", model="m", endpoint="http://127.0.0.1:1/v1",
                             status=401 if kind == "refused" else 429, retryable=kind == "limited")

    @prefect_flow
    def stage() -> None:  # as in a run: the task's logs then have a flow run to go to (no warning)
        for kind in attempts:
            with pytest.raises((ModelCallError, CoderError)):
                call(kind)

    stage()
    assert attempts == {"refused": 1, "limited": 1 + MODEL_RETRIES["retries"], "no-html": 1}


def test_the_waits_between_a_stage_s_attempts_come_from_the_environment_and_a_bad_value_is_named():
    from flows import stage_retry_delays

    assert MODEL_RETRIES["retry_delay_seconds"] == [0.2, 0.5]  # tests/conftest.py shortened them
    assert stage_retry_delays("") == [2.0, 10.0] and stage_retry_delays(" 1, 3.5") == [1.0, 3.5]
    for bad in ("soon", "1", "1,2,3", "-1,2", "1,inf"):
        with pytest.raises(ValueError, match=f"AUI_STAGE_RETRY_DELAYS_S={bad!r}"):
            stage_retry_delays(bad)
    import os
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "aui", "run", "--offline", "--app", APP, "--rounds", "0"],
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "AUI_STAGE_RETRY_DELAYS_S": "soon"})
    assert done.returncode == 2 and done.stderr.strip() == "error: AUI_STAGE_RETRY_DELAYS_S='soon': expected two " \
        "waits in seconds, e.g. 2,10", done.stderr
