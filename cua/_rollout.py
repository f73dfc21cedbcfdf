"""The rollout loop: one agent, one task, one episode of `AppEnv`, at most `max_steps` steps.

observe → policy.act (model-call limit; a reply that does not parse or points off the screen is
re-asked, a bounded number of times) → `env.step` (convert coordinates, execute, settle,
screenshot, checker) → write the step (PNG + atomic JSON) → stop on success (unless
`RolloutConfig.stop_on_checker` is off), `finished`, stuck or a limit; then the final page's visible text is kept (`final_text`, one read, for text-only judges).
Whatever happens — a hung page, a dead browser, a model that will not answer — `rollout` returns
the trajectory so far with a termination reason; no exception escapes it.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import re
import time
from collections.abc import Awaitable
from contextlib import suppress
from pathlib import Path

from ._actions import Action
from ._check import Checker
from ._config import RolloutConfig
from ._coordinates import OffScreenPoint, place_action
from ._env import AppEnv, describe_error, elapsed_ms
from ._policy import Observation, Policy, PolicyDecision
from ._progress import ProgressTracker
from ._screenshot import ScreenshotTimeout
from ._trajectory import CANCELLED, TRAJECTORY_FILE, Step, TerminationReason, TokenUsage, Trajectory, write_atomic
from ._tuples import TUPLES_FILE

TRACE_FILE = "trace.zip"


class _Ended(Exception):
    """Internal: the episode reached a termination reason."""

    def __init__(self, reason: TerminationReason, error: str | None = None):
        super().__init__(reason.value)
        self.reason = reason
        self.error = error


async def rollout(
    html: str | bytes,
    task: str,
    policy: Policy,
    checker: Checker | None,
    out_dir: str | Path,
    config: RolloutConfig | None = None,
    *,
    app_id: str = "app",
    task_id: str = "task",
    expected_outcome: str = "",
    extra_files: dict[str, bytes] | None = None,
    seed: int | None = None,
    fixed_clock: bool = False,
) -> Trajectory:
    """Run `policy` on `task` against the app `html` in a fresh context; write the trajectory to `out_dir`.

    `seed` seeds the app's `Math.random` (None: unseeded) and `fixed_clock` starts its clock at
    `cua.FIXED_CLOCK_START` (`AppEnv.reset`); the trajectory records both.

    Never raises for anything the app, the browser or the policy does: the returned (and saved)
    trajectory carries the termination reason and, for `error`/`timeout`, the reason text (a seed
    that is not an int ends it as `error` too).
    """
    config = config or RolloutConfig()
    run = _Rollout(html, task, policy, checker, Path(out_dir), config, extra_files, seed, fixed_clock)
    run.trajectory = Trajectory(
        app_id=app_id,
        task_id=task_id,
        task=task,
        expected_outcome=expected_outcome,
        policy=getattr(policy, "name", type(policy).__name__),
        model=policy.model,
        offline=policy.offline,
        viewport_width=config.browser.viewport.width,
        viewport_height=config.browser.viewport.height,
        coordinate_space=_safe_space(policy),
        policy_settings=policy.settings(),
        chromium=config.browser.executable_path,
        in_page_select_picker=config.browser.in_page_select_picker,
        seed=seed,
        fixed_clock=fixed_clock,
        short_timers_ms=config.browser.short_timers_ms,
        still_animations=config.browser.still_animations,
        transform=config.browser.transform.name if config.browser.transform else None,
        transform_sha256=config.browser.transform.sha256 if config.browser.transform else None,
        stop_on_checker=config.stop_on_checker,
        max_steps=config.max_steps,
        html_sha256=hashlib.sha256(html.encode("utf-8") if isinstance(html, str) else html).hexdigest(),
    )
    return await run.run()


class _Rollout:
    def __init__(self, html, task, policy, checker, out_dir: Path, config: RolloutConfig, extra_files, seed, fixed_clock):
        self.html, self.task, self.policy, self.checker = html, task, policy, checker
        self.seed, self.fixed_clock = seed, fixed_clock
        self.out_dir, self.config = out_dir, config
        self.env = AppEnv(config, extra_files=extra_files)
        self.trajectory: Trajectory
        self.started = time.monotonic()
        self.pending: Step | None = None  # the step in progress, kept if the episode is cut short
        self.progress = ProgressTracker(config.stuck_no_change_steps, config.stuck_repeat_steps)
        self.invalid_replies = 0

    async def run(self) -> Trajectory:
        trajectory = self.trajectory
        try:
            self.out_dir.mkdir(parents=True, exist_ok=True)
            async with self.env:
                try:
                    await self._episode()
                except _Ended as ended:
                    self._end(ended.reason, ended.error)
                except (asyncio.TimeoutError, TimeoutError):
                    if self.env.events is None:
                        raise  # making the context timed out, not the episode: handled below
                    self._end(TerminationReason.timeout, f"episode exceeded {self.config.episode_timeout_s:g} s")
                except ScreenshotTimeout as exc:
                    self._end(TerminationReason.timeout, str(exc))
                except Exception as exc:
                    self._end(TerminationReason.error, describe_error(exc))
                except asyncio.CancelledError:
                    # Cancelled from outside (a flow run stopped): keep what was done, then let it propagate.
                    # Before the app's context opened nothing was done, so nothing is kept.
                    if self.env.events is not None:
                        self._end(TerminationReason.error, CANCELLED)
                        self._save()
                    raise
                await self._read_final_text()
                if await self.env.save_trace(self.out_dir / TRACE_FILE):
                    trajectory.trace = TRACE_FILE
        except Exception as exc:  # no browser, no context: still leave a record
            self._end(TerminationReason.error, describe_error(exc))
        finally:
            with suppress(Exception):
                await self.policy.close()
        if trajectory.termination is None:
            self._end(TerminationReason.error, "rollout ended without a reason")
        self._save()
        return trajectory

    # ---- the loop -------------------------------------------------------------------------

    async def _episode(self) -> None:
        # The episode clock started when the app's context did (`AppEnv.time_left`): loading the
        # app and the first observation are on it.
        observation = await self.env.reset(self.html, self.task, self.checker, seed=self.seed, fixed_clock=self.fixed_clock)
        self.trajectory.chromium_version = self.env.browser_version
        await asyncio.wait_for(self._loop(observation), max(self.env.time_left(), 0.001))

    async def _loop(self, observation: Observation) -> None:
        self.trajectory.initial_screenshot = "step_000.png"
        await self._write(observation.screenshot, "step_000.png")
        action_screenshots: list[bytes] = []
        while len(self.trajectory.steps) < self.config.max_steps:
            deadline = self._step_deadline()
            asked = dataclasses.replace(
                observation,
                history=list(self.trajectory.steps),
                action_screenshots=action_screenshots,
                page=self.env.page if self.policy.offline else None,
            )
            decision, rejected, refusals, model_ms, tokens = await self._decide(asked, deadline)
            action_screenshots = []
            for position, action in enumerate(decision.actions):
                if len(self.trajectory.steps) >= self.config.max_steps:
                    break
                step = Step(index=len(self.trajectory.steps) + 1, model_action=action, raw_text=decision.raw_text,
                            thought=decision.thought)
                if position == 0:  # the reply's cost and rejections belong to its first action's step
                    step.invalid_replies, step.notes, step.tokens = rejected, refusals + list(decision.notes), tokens
                    step.timings.model_ms = model_ms
                else:
                    deadline = self._step_deadline()
                observation = await self._bounded(self._act(step, action, deadline), deadline, step)
                action_screenshots.append(observation.screenshot)
        raise _Ended(TerminationReason.max_steps)

    def _step_deadline(self) -> float:
        """When a step starting now must end. Ends the episode if its limit has passed: cancelling the loop enforces
        it too, but Python 3.11's nested `wait_for` can swallow that cancellation; this check cannot be missed."""
        if self.env.time_left() <= 0:
            raise _Ended(TerminationReason.timeout, f"episode exceeded {self.config.episode_timeout_s:g} s")
        return time.monotonic() + self.config.step_timeout_s

    async def _decide(
        self, observation: Observation, deadline: float
    ) -> tuple[PolicyDecision, list[str], list[str], float, TokenUsage]:
        """Ask the policy; re-ask after an unusable reply, within the episode's invalid budget.

        A reply is unusable when it did not parse (`decision.invalid`), has no action, or points
        off the screen beyond the tolerance (`place_action`). Returns the usable decision, the
        replies rejected before it, one note per rejection saying why, the model time and tokens.
        """
        rejected: list[str] = []
        refusals: list[str] = []
        tokens = TokenUsage()
        model_ms = 0.0
        while True:
            limit = min(self.config.model_timeout_s, deadline - time.monotonic())
            started = time.perf_counter()
            try:
                decision = await asyncio.wait_for(self.policy.act(observation), max(limit, 0.001))
            except _Ended:
                raise
            except Exception as exc:
                self.pending = Step(index=len(self.trajectory.steps) + 1, invalid_replies=rejected, notes=refusals,
                                    tokens=tokens)
                if isinstance(exc, TimeoutError):  # asyncio.TimeoutError is TimeoutError since Python 3.11
                    raise _Ended(TerminationReason.timeout, f"the policy did not answer within {limit:.1f} s")
                raise _Ended(TerminationReason.error, f"policy failed: {describe_error(exc)}")
            model_ms += decision.model_ms or (time.perf_counter() - started) * 1000
            tokens += decision.tokens
            reason = decision.invalid or ("the reply contained no action" if not decision.actions else None)
            reason = reason or self._off_screen(decision)
            if reason is None:
                return decision, rejected, refusals, round(model_ms, 2), tokens
            self.invalid_replies += 1
            rejected.append(decision.raw_text or f"<{reason}>")
            refusals.append(f"invalid reply {len(rejected)}: {reason}")
            if self.invalid_replies >= self.config.max_invalid_replies:
                self.pending = Step(
                    index=len(self.trajectory.steps) + 1,
                    raw_text=decision.raw_text,
                    thought=decision.thought,
                    invalid_replies=rejected,
                    notes=refusals + list(decision.notes),
                    error=f"invalid reply: {reason}",
                    tokens=tokens,
                )
                self.pending.timings.model_ms = round(model_ms, 2)
                raise _Ended(
                    TerminationReason.invalid, f"{self.invalid_replies} replies could not be used; last: {reason}"
                )
            observation.feedback = f"Your previous reply could not be used ({reason}). Reply again in the required format."
            # Nothing of the rejected reply ran: a policy answering its calls with the screenshot
            # after each (OpenAI computer-use) must answer them all with the screen as it is.
            observation.action_screenshots = []

    def _off_screen(self, decision: PolicyDecision) -> str | None:
        """Why one of the decision's points cannot be placed on the screen, or None if all can.

        The same rule `env.step` applies (`place_action`), judged before anything runs, so that a
        refused point is an unusable reply — re-asked, within the budget — and never half a decision.
        """
        viewport = self.env.viewport
        for action in decision.actions:
            try:
                place_action(action, self.trajectory.coordinate_space, viewport.width, viewport.height)
            except OffScreenPoint as exc:
                return str(exc)
        return None

    async def _act(self, step: Step, action: Action, deadline: float) -> Observation:
        """Execute one action through the environment and record it as `step`; returns the observation after it."""
        started = time.perf_counter()
        self.pending = step
        result = await self.env.step(action, self.trajectory.coordinate_space, record=step, deadline=deadline)
        if action.kind == "finished":
            # No input: the page is as the last screenshot shows (the environment judged it once more).
            step.screenshot = self.trajectory.steps[-1].screenshot if self.trajectory.steps else self.trajectory.initial_screenshot
            step.timings.total_ms = round(step.timings.model_ms + elapsed_ms(started), 2)
            self._commit(step)
            self._save()
            raise _Ended(TerminationReason.success if result.check.passed else TerminationReason.finished)

        screenshot = result.observation.screenshot
        step.screenshot = f"step_{step.index:03d}.png"
        write_started = time.perf_counter()
        self._commit(step)
        await self._write(screenshot, step.screenshot)
        step.timings.write_ms = elapsed_ms(write_started)
        step.timings.total_ms = round(step.timings.model_ms + elapsed_ms(started), 2)
        if result.check.passed and self.config.stop_on_checker:
            raise _Ended(TerminationReason.success)
        stuck = self.progress.record(
            step.screen_action.model_dump_json(),
            bool(step.dom_changed) or step.screen_changed,
            f"{result.fingerprint}:{hashlib.sha1(screenshot).hexdigest()}",
        )
        if stuck:
            raise _Ended(TerminationReason.stuck, stuck)
        return result.observation

    async def _bounded(self, work: Awaitable[Observation], deadline: float, step: Step) -> Observation:
        remaining = deadline - time.monotonic()
        try:
            return await asyncio.wait_for(work, max(remaining, 0.001))
        except (asyncio.TimeoutError, TimeoutError):
            self.pending = step
            raise _Ended(TerminationReason.timeout, f"step {step.index} exceeded {self.config.step_timeout_s:g} s")

    # ---- recording ------------------------------------------------------------------------

    async def _read_final_text(self) -> None:
        """Keep the final page's visible text in the trajectory (one evaluate; a failure is recorded, never raised)."""
        limit = self.config.final_text_max_chars
        if limit <= 0:
            return
        if self.env.events is None:
            self.trajectory.final_text_error = "no page was loaded"
            return
        try:
            text, truncated = await self.env.visible_text(limit)
        except Exception as exc:  # a crashed or hung page: the record says why there is no text
            self.trajectory.final_text_error = describe_error(exc)
            return
        self.trajectory.final_text, self.trajectory.final_text_truncated = text, truncated

    def _commit(self, step: Step) -> None:
        self.trajectory.steps.append(step)
        self.pending = None

    def _end(self, reason: TerminationReason, error: str | None) -> None:
        trajectory = self.trajectory
        if trajectory.termination is not None:
            return
        if self.pending is not None:
            step, self.pending = self.pending, None
            if reason in (TerminationReason.timeout, TerminationReason.error) and not step.error:
                step.error = f"{reason.value}: {error}" if error else reason.value
            trajectory.steps.append(step)
        trajectory.termination = reason
        # Success is the checker turning true: it ends the episode, unless the run goes on to an answer
        # (`stop_on_checker` off), where a pass at any step counts, as in the paper's SR.
        trajectory.success = reason == TerminationReason.success or (
            not self.config.stop_on_checker and trajectory.checker_ever_passed
        )
        trajectory.error = error

    def _update(self) -> None:
        """Bring the trajectory's copy of the page's event log and its duration up to now."""
        trajectory, events = self.trajectory, self.env.events
        trajectory.duration_s = round(time.monotonic() - self.started, 3)
        if events is None:
            return
        trajectory.blocked_requests = list(events.blocked_requests)
        trajectory.dialogs = list(events.dialogs)
        trajectory.popups_closed = events.popups_closed
        trajectory.downloads_refused = events.downloads_refused
        trajectory.page_errors = (
            list(events.page_errors) + events.overflow_notes() + (["renderer crashed"] if events.crashed else [])
        )

    async def _write(self, png: bytes, name: str) -> None:
        self._update()
        data = self.trajectory.model_dump_json(indent=1).encode("utf-8")
        await asyncio.to_thread(_write_files, self.out_dir, name, png, data)

    def _save(self) -> None:
        self._update()
        with suppress(OSError):  # an unwritable folder must not turn a finished rollout into an exception
            self.trajectory.save(self.out_dir)


def _write_files(folder: Path, name: str, png: bytes, trajectory_json: bytes) -> None:
    # The PNG first: the JSON never names a screenshot that is not on disk yet.
    write_atomic(folder / name, png)
    write_atomic(folder / "trajectory.json", trajectory_json)


def clear_rollout(folder: Path | str) -> None:
    """Remove the files a rollout (and its tuples) wrote into `folder` (its trajectory.json, step screenshots,
    trace.zip and tuples.jsonl), so rolling out into it again leaves none of the earlier ones beside the new
    trajectory; any other file there stays."""
    for path in Path(folder).glob("*"):
        # step_NNN.png: the screenshots' names as `_Rollout` writes them
        if path.name in (TRAJECTORY_FILE, TUPLES_FILE, TRACE_FILE) or re.fullmatch(r"step_\d{3,}\.png", path.name):
            path.unlink()


def _safe_space(policy: Policy) -> str:
    try:
        return policy.coordinate_space
    except Exception:
        return "screen"
