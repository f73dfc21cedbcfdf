"""The rollout stage: one CUA attempt at one task, judged by its checker, then its 1920×1080 dashboard.

Rollouts of a round share this process's one browser; `browser_slot_held` bounds the contexts open at
once across apps and tracks (the run's `concurrency`). A stage holds a slot only around its
browser work, so Prefect's bookkeeping of one rollout overlaps the browser work of others.
"""

from __future__ import annotations

import asyncio
import json
import multiprocessing
import os
import shutil
from collections.abc import AsyncIterator
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import asynccontextmanager
from pathlib import Path

from prefect import task

from apps_prompts import Check, Task
from cua import (
    TUPLES_FILE,
    BrowserConfig,
    PageTransform,
    RolloutConfig,
    Trajectory,
    Viewport,
    failure_modes,
    rollout,
    write_tuples,
)
from cua.policies import get_policy
from dashboard_render import draw_dashboard_file
from llm import BudgetReached, RoleProvider, load_model_registry
from verifier import rollout_checker, score_rollout
from verifier.judge import OFFLINE_JUDGE, get_judge

from ._budget import stopped_by_budget
from ._cache import stage_cache, version_in_use
from ._dask import on_worker_loop
from ._orphans import end_with_parent
from ._refs import AgentSettings, FileRef, RolloutRef, RunContext, sha256_bytes

ROLLOUT_INPUTS = "rollout-inputs.json"
DASHBOARD = "dashboard.png"


@task(cache_policy=stage_cache("rollout"), persist_result=True, task_run_name="rollout {app_id}/{task.id} r{round} ({agent.policy})")
@on_worker_loop
async def rollout_task(*, run: RunContext, app_id: str, round: int, task: Task, checker: str | None, html: FileRef,
                       agent: AgentSettings, out_path: str, checks: list[Check] | None = None,
                       judge: RoleProvider | None = None, variation: str = "default",
                       transform: PageTransform | None = None) -> RolloutRef:
    """One CUA rollout judged by every check of the task, then its 1920×1080 dashboard.

    The checker runs after every step and ends the rollout when it turns true — unless the task also
    wants an answer, when the agent must still say `finished(content=…)`. `checks` (the verdict's, or
    the task's) are scored when the rollout has ended: an answer against its expected value, a
    final_screenshot / flow check by `judge` (its provider; None: the offline judge). The rollout succeeds when
    every check passes. `transform` is the proven variant's (`variation`): the app is served under it.

    The rollout is written to a staging folder and moved to `out_path` only once it has ended and
    its dashboard is drawn, so `out_path` never holds half a rollout; its transition tuples are then
    written beside it (`tuples.jsonl`, `cua.write_tuples`: labelled when the app was served with an
    injected defect). Work a killed run finished is kept (its Prefect result may never have been stored): a folder — final or staging — whose
    trajectory ended and whose recorded inputs match is used as it is. A staging folder with an
    unfinished trajectory is cleared before the rollout runs again.
    """
    checks = list(checks or [])
    needs_answer = any(check.kind == "answer" for check in checks)
    inputs = dict(app_id=app_id, round=round, task_id=task.id, task_text=task.description,
                  expected_outcome=task.expected_outcome, checker=checker, html_sha=html.sha, policy=agent.policy,
                  cua_model=agent.model, max_steps=agent.max_steps, viewport=str(agent.viewport),
                  options=agent.options, trace=agent.trace)
    if agent.seed is not None or needs_answer:  # keys of rollouts made before seeds and answers stay as they were
        inputs.update(seed=agent.seed, stop_on_checker=not needs_answer)
    if agent.fixed_clock:
        inputs.update(fixed_clock=True)
    if transform is not None:  # keys of default-look rollouts stay as they were
        inputs.update(variation=variation, transform=transform.sha256)
    # The code that rolls out (and its Chromium): a folder a killed run finished is reused only if they are the same.
    inputs.update(stage_version=version_in_use("rollout", run.run_dir))
    inputs_sha = sha256_bytes(json.dumps(inputs, sort_keys=True))
    folder = run.root / out_path
    trajectory = finished_rollout(folder, inputs_sha)
    if trajectory is None:
        staging = folder.with_name(f".{folder.name}.partial")
        trajectory = finished_rollout(staging, inputs_sha)
        if trajectory is None:
            if staging.exists():
                shutil.rmtree(staging)  # what a killed attempt left; never mixed into a new one
            run.write(Path(out_path).with_name(staging.name) / ROLLOUT_INPUTS,
                      json.dumps({"inputs_sha256": inputs_sha, **inputs}, indent=1))
            async with browser_slot_held():
                trajectory = await _roll_out(run, app_id, task, checker, html, agent, staging,
                                             stop_on_checker=not needs_answer, transform=transform)
            if stopped_by_budget(trajectory.error):
                # Cut short, not ended: never taken for a finished rollout (nor cached); a re-run does it again.
                (staging / ROLLOUT_INPUTS).unlink(missing_ok=True)
                raise BudgetReached(f"rollout {app_id}/{task.id} stopped: {trajectory.error}",
                                    model=agent.model or agent.policy, endpoint="budget")
        if trajectory.success and agent.trace == "failures":
            _drop_trace(trajectory, staging)
        if not (staging / DASHBOARD).is_file():
            await _draw_dashboard(trajectory, staging)
        _replace_folder(staging, folder)
    if not (folder / TUPLES_FILE).is_file():  # the tuples dataset (GTArena's unit), also for rollouts made before it
        # in a thread: telling a caret's blink from a change decodes screenshots (6 % of the loop's CPU in `make run`)
        await asyncio.to_thread(write_tuples, trajectory, folder)
    dashboard = Path(out_path) / DASHBOARD if (folder / DASHBOARD).is_file() else None
    trace = Path(out_path) / trajectory.trace if trajectory.trace and (folder / trajectory.trace).is_file() else None
    score = await _score(run, trajectory, checker, checks, judge, out_path, round, agent.policy)
    return RolloutRef(
        app_id=app_id, task_id=task.id, trajectory=out_path, dashboard=str(dashboard) if dashboard else None,
        trace=str(trace) if trace else None,
        termination=trajectory.termination.value if trajectory.termination else None,
        success=score.passed, steps=len(trajectory.steps), error=trajectory.error, checks=score.checks,
        answer=score.answer, variation=variation,
        failure_modes=failure_modes(trajectory, answer_failed=any(c.kind == "answer" for c in score.failed_checks)),
    )


async def _score(run: RunContext, trajectory: Trajectory, checker: str | None, checks: list[Check],
                 judge: RoleProvider | None, out_path: str, round_: int, cua: str):
    """Every check of the task on the ended rollout (`verifier.score_rollout`); judges are made only when needed."""
    judges = {}
    kinds = {check.kind for check in checks} & {"final_screenshot", "flow"}
    if kinds:
        from ._stages import client_for

        client = client_for(run, judge) if judge is not None else None
        judges = {kind: get_judge(judge.name if judge else OFFLINE_JUDGE,
                                  "screenshot" if kind == "final_screenshot" else "flow", client) for kind in kinds}
    return await score_rollout(trajectory, has_checker=bool(checker), checks=checks, judges=judges, run_dir=run.root,
                               trajectory_id=out_path, round_=round_, cua=cua)


DEFAULT_BROWSER_SLOTS = 2
_slot_limits: dict[int, int] = {}
_slots: dict[tuple[int, int], asyncio.Semaphore] = {}


def use_browser_slots(limit: int) -> None:
    """Rollouts in flight at once on this event loop's browser (the run's `concurrency`)."""
    _slot_limits[id(asyncio.get_running_loop())] = limit


_slot_counts = {"waiting": 0, "in_use": 0}


def browser_slots_now() -> tuple[int, int]:
    """Rollouts of this process right now: (waiting for a browser slot, holding one) — for the live display."""
    return _slot_counts["waiting"], _slot_counts["in_use"]


@asynccontextmanager
async def browser_slot_held() -> AsyncIterator[None]:
    """One of this loop's slots for open browser contexts, across apps and tracks (a Dask worker that was
    never told a limit has DEFAULT_BROWSER_SLOTS), for the block; counted in `browser_slots_now`."""
    loop = id(asyncio.get_running_loop())
    limit = _slot_limits.get(loop, DEFAULT_BROWSER_SLOTS)
    slot = _slots.setdefault((loop, limit), asyncio.Semaphore(limit))
    _slot_counts["waiting"] += 1
    try:
        await slot.acquire()
    finally:
        _slot_counts["waiting"] -= 1
    _slot_counts["in_use"] += 1
    try:
        yield
    finally:
        _slot_counts["in_use"] -= 1
        slot.release()


def run_browser_config(viewport: Viewport) -> BrowserConfig:
    """The browser every rollout of a run gets (its viewport; everything else `BrowserConfig`'s defaults,
    e.g. `in_page_select_picker`). The one place that decides it: `write_manifest` records this too."""
    return BrowserConfig(viewport=viewport)


def finished_rollout(folder: Path, inputs_sha: str) -> Trajectory | None:
    """The trajectory in `folder` if it ended and was made from the same inputs, else None."""
    try:
        recorded = json.loads((folder / ROLLOUT_INPUTS).read_text(encoding="utf-8"))
        trajectory = Trajectory.load(folder)
    except (OSError, ValueError):
        return None
    if recorded.get("inputs_sha256") != inputs_sha or trajectory.termination is None or trajectory.cancelled:
        return None  # not made from these inputs, or it did not end by itself: roll out again
    return trajectory


async def _roll_out(run: RunContext, app_id: str, task: Task, checker: str | None, html: FileRef, agent: AgentSettings,
                    folder: Path, stop_on_checker: bool = True, transform: PageTransform | None = None) -> Trajectory:
    from ._limits import use_cross_process_limits

    use_cross_process_limits()  # the CUA's endpoint limit across processes, where several share it

    browser = run_browser_config(agent.viewport).model_copy(update={"transform": transform})
    config = RolloutConfig(max_steps=agent.max_steps, browser=browser,
                           trace=agent.trace != "off", stop_on_checker=stop_on_checker)
    policy = get_policy(agent.policy_class or agent.policy, model=agent.model, models_path=run.models, **agent.options,
                        **_sampling_seed(run, agent))
    return await rollout(run.read_text(html), task.description, policy, rollout_checker(checker), folder, config,
                         app_id=app_id, task_id=task.id, expected_outcome=task.expected_outcome, seed=agent.seed,
                         fixed_clock=agent.fixed_clock)


def _sampling_seed(run: RunContext, agent: AgentSettings) -> dict[str, int]:
    """The model's sampling seed for this rollout: where the registry gives the model a `params.seed` (its server
    takes one), that seed plus the rollout's, so each repeat samples differently and reproducibly; else nothing."""
    if agent.calls is None or agent.seed is None:
        return {}
    configured = load_model_registry(run.models).get(agent.calls).params.seed
    return {} if configured is None else {"seed": configured + agent.seed}


def _drop_trace(trajectory: Trajectory, folder: Path) -> None:
    """`trace: failures` records every rollout (whether it fails is known only at its end) and keeps failed ones."""
    if trajectory.trace:
        (folder / trajectory.trace).unlink(missing_ok=True)
        trajectory.trace = None
        trajectory.save(folder)


_drawing_pool: ProcessPoolExecutor | None = None
_drawing_pool_failed = False


def _drawing_process() -> ProcessPoolExecutor | None:
    """One process that draws dashboards for this one, made at first use; None where none can be made
    (a daemonic Dask worker may not have children): then a thread of this process draws them."""
    global _drawing_pool, _drawing_pool_failed
    if _drawing_pool is None and not _drawing_pool_failed:
        if multiprocessing.current_process().daemon:
            _drawing_pool_failed = True
        else:
            # It ends with this process, however that ends (a `kill -9` too): it watches its parent, and under
            # `aui` the command's watcher ends it (`_orphans`); multiprocessing's resource tracker, started
            # with it, ends once it has.
            _drawing_pool = ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn"),
                                                initializer=end_with_parent, initargs=(os.getpid(),))
    return _drawing_pool


async def _draw_dashboard(trajectory: Trajectory, folder: Path) -> None:
    global _drawing_pool, _drawing_pool_failed
    try:
        # Drawing is CPU work that holds the GIL (text layout, PNG rows): in a process of its own, so
        # the event loop — and every other rollout in flight — is not held up by it (bench/scale.py's
        # profile found it on the loop's GIL); in a thread where no such process can be had.
        pool = _drawing_process()
        if pool is not None:
            try:
                await asyncio.get_running_loop().run_in_executor(pool, draw_dashboard_file, folder, folder / DASHBOARD)
                return
            except BrokenProcessPool:
                _drawing_pool, _drawing_pool_failed = None, True
        await asyncio.to_thread(draw_dashboard_file, folder, folder / DASHBOARD)
    except Exception as exc:  # a dashboard is a view; the rollout's result stands without it
        if not trajectory.error:
            trajectory.error = f"dashboard: {exc}"
            trajectory.save(folder)


def _replace_folder(staging: Path, folder: Path) -> None:
    """Move the finished `staging` folder to `folder`, replacing an older one only once the new one is whole."""
    old = folder.with_name(f".{folder.name}.old")
    if old.exists():
        shutil.rmtree(old)
    if folder.exists():
        folder.rename(old)
    staging.rename(folder)
    if old.exists():
        shutil.rmtree(old)
