"""One app as a Gymnasium environment: `cua.AppEnv` behind Gymnasium's `reset` / `step` / `render` / `close`.

The environment owns no browser logic: `cua.AppEnv` loads the app (warm pages, the seeded page, the
fixed clock), executes each action through the one executor, lets the page settle and runs the
task's proven checker — exactly what a rollout step does. This class adapts: the spaces
(`_spaces`), the seed (`reset(seed=s)` serves the page seeded with `s`; no seed: one drawn from the
environment's generator), the reward (1.0 on the step the checker turns true), the episode's end
(`terminated` on success or `finished`, `truncated` at the step budget or when the page failed), and
the sync calls over the room's event loop (`_loop`).
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gymnasium
import numpy as np

from apps_prompts import BUNDLED_DIR, Task, load_app
from cua import DEFAULT_VIEWPORT, Action, AppEnv, Checker, Observation, OffScreenPoint, Policy, RolloutConfig, Step
from cua import StepResult, Viewport, action_to_screen, coordinate_space_names, place_action
from experiment import DEFAULT_LEVELS, UNLEVELLED_MAX_STEPS
from perturb import DEFAULT, DefectRecord, DefectSpec
from verifier import rollout_checker

from . import _loop
from ._apps import loaded_app
from ._proofs import Offer, prove_offers, serving_for
from ._spaces import InvalidAction, Prepared, action_space, decode_png, in_charset, observation_space, to_action

RESET_TIMEOUT_S = 120.0
"""The longest `reset` waits for the app to load and settle (the browser's own load limit is 15 s)."""
WAIT_SLACK_S = 30.0
"""Beyond the step's own limit (`RolloutConfig.step_timeout_s`), how long `step` waits before it gives up."""
PROOF_TIMEOUT_S = 120.0
PROOF_TIMEOUT_PER_TASK_S = 90.0
STEP_RECORD_EXCLUDE = {"timings", "at_s", "tokens", "screenshot"}
"""What `info["step"]` leaves out of the step's record: what differs between two runs of the same step; the
durations its notes name are written `N ms` (the full record, timings included, is `env.unwrapped.last_step`)."""
_DURATION = re.compile(r"\b\d+(?:\.\d+)? ms\b")


class TaskNotOffered(ValueError):
    """A task the environment does not offer: unknown, without a reference checker or solution, or its checker
    not proven on the page the environment serves (the message says which and why)."""


@dataclass
class Outcome:
    """What one step did on the loop: the environment's result, or why the page failed (the episode ends)."""

    result: StepResult | None
    text: str | None = None
    failure: tuple[str, str] | None = None  # (termination reason, error)


class AppGymEnv(gymnasium.Env):
    """`gymnasium.make("aui/<app-id>-v0", task=…, variation=…, defect=…, viewport=…, max_steps=…)` — see the README.

    `task`: a task id (default: the app's first offered task), a list of ids or "all" (each `reset` draws one
    with the environment's generator; `reset(options={"task": id})` picks one). `variation` / `defect`: served
    through `perturb` (one of the two; a defect binds to one task). `max_steps`: the step budget (default:
    the task's level's, 20 without a level). `text_observation`: add the page's visible text (`text`, at
    most `text_max_chars`). `uitars_space`: the coordinate space of UI-TARS reply strings. `fixed_clock`: the
    app's clock starts at `cua.FIXED_CLOCK_START` every episode. `still_animations`: infinite animations are
    stopped as they start (`cua.BrowserConfig.still_animations`), so the same seed and actions give the same frames.
    `rollout_config`: the settle and time limits (`cua.RolloutConfig`; default: a rollout's).

    Raises (at make): TaskNotOffered for a task that is not offered; ValueError for a bad variation, defect or
    viewport; KeyError / FileNotFoundError for an unknown app or a missing page.
    """

    metadata = {"render_modes": ["rgb_array"], "render_fps": 1}

    def __init__(self, app_id: str, apps: str | Path = BUNDLED_DIR, v0_dir: str | Path | None = None,
                 tasks_file: str | Path | None = None, *, task: str | list[str] | None = None,
                 variation: str = DEFAULT, variation_seed: int = 0, defect: str | DefectSpec | DefectRecord | None = None,
                 defect_seed: int = 0, viewport: str | Viewport | None = None, max_steps: int | None = None,
                 text_observation: bool = False, text_max_chars: int = 4_000, uitars_space: str = "uitars-1.5",
                 fixed_clock: bool = True, still_animations: bool = True, render_mode: str | None = None,
                 rollout_config: RolloutConfig | dict | None = None):
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode {render_mode!r} is not one of {self.metadata['render_modes']}")
        if max_steps is not None and max_steps < 1:
            raise ValueError(f"max_steps must be at least 1, got {max_steps}")
        if uitars_space not in coordinate_space_names():
            raise ValueError(f"uitars_space {uitars_space!r} is not a coordinate space ({', '.join(coordinate_space_names())})")
        self.render_mode = render_mode
        self.app = loaded_app(load_app(app_id, apps), v0_dir, tasks_file)
        self.viewport = viewport if isinstance(viewport, Viewport) else Viewport.parse(viewport) if viewport else DEFAULT_VIEWPORT
        self.uitars_space, self.fixed_clock, self.max_steps_override = uitars_space, fixed_clock, max_steps
        self.text_max_chars = text_max_chars if text_observation else None
        config = RolloutConfig.model_validate(rollout_config or {})
        candidates = self._candidates(task)
        self.serving = serving_for(candidates, variation, variation_seed, defect, defect_seed)
        browser = config.browser.model_copy(update={"viewport": self.viewport, "transform": self.serving.transform,
                                                     "still_animations": still_animations})
        self.config = config.model_copy(update={"browser": browser})
        self._loop = _loop.event_loop()
        self.offers: dict[str, Offer] = {}
        self.tasks = self._prove(candidates, "first" if task is None else "all" if task == "all" else "explicit")
        self.unoffered = {task_id: offer.reason for task_id, offer in self.offers.items() if not offer.proven}
        self._checkers: dict[str, Checker | None] = {t.id: rollout_checker(self.offers[t.id].checker) for t in self.tasks}
        self.observation_space = observation_space(self.viewport, self.text_max_chars)
        self.action_space = action_space(self.viewport)
        self.app_env = AppEnv(self.config)
        self.task: Task | None = None
        self.last_step: Step | None = None  # the latest step's full record (timings included)
        self._frame: np.ndarray | None = None
        self._steps, self._budget, self._ended, self._closed = 0, 0, False, False

    # ---- which tasks ---------------------------------------------------------------------------

    def _candidates(self, task: str | list[str] | None) -> list[Task]:
        solvable = self.app.solvable()
        by_id = {t.id: t for t in self.app.spec.tasks}
        if task is None or task == "all":
            if not solvable:
                raise TaskNotOffered(f"app '{self.app.spec.id}' has no task with a reference checker and solution")
            return solvable
        wanted = [task] if isinstance(task, str) else list(task)
        if not wanted:
            raise TaskNotOffered("task: an empty list")
        for task_id in wanted:
            if task_id not in by_id:
                raise TaskNotOffered(f"app '{self.app.spec.id}' has no task {task_id!r} (known: {', '.join(by_id)})")
            if by_id[task_id] not in solvable:
                raise TaskNotOffered(f"task '{task_id}' of app '{self.app.spec.id}' is not offered: it has no reference "
                                     f"{'checker' if not by_id[task_id].checker else 'solution'} to prove its checker with")
        return [by_id[task_id] for task_id in dict.fromkeys(wanted)]

    def _prove(self, candidates: list[Task], mode: str) -> list[Task]:
        """The offered tasks: the first candidate proven ("first"), the proven ones ("all"), or every one
        ("explicit"). Raises TaskNotOffered, naming each reason, when that is none (explicit: not every one)."""
        browser, batches = self.config.browser, [[task] for task in candidates] if mode == "first" else [candidates]
        for batch in batches:
            limit = PROOF_TIMEOUT_S + PROOF_TIMEOUT_PER_TASK_S * len(batch)
            self.offers.update(_loop.run(prove_offers(self.app, batch, self.serving, browser), self._loop, limit,
                                         f"proving the checkers of {self.app.spec.id}"))
            if mode == "first" and self.offers[batch[0].id].proven:
                return batch
        proven = [task for task in candidates if self.offers[task.id].proven]
        if not proven or mode == "explicit" and len(proven) < len(candidates):
            failed = "; ".join(f"'{task_id}': {offer.reason}" for task_id, offer in self.offers.items() if not offer.proven)
            served = "as it is" if self.serving.transform is None else f"as {self.serving.name}"
            raise TaskNotOffered(f"app '{self.app.spec.id}' (served {served}) does not offer a task whose checker is "
                                 f"not proven on that page — {failed}")
        return proven

    # ---- Gymnasium's API ---------------------------------------------------------------------------

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[dict, dict]:
        """Load the app fresh with a task; `seed` seeds the page (the same seed, the same first observation).

        `options={"task": id}` picks the task (else: the one task, or one drawn with the generator).
        Raises TaskNotOffered for a task `options` names that is not offered; TimeoutError when the app
        did not load and settle within RESET_TIMEOUT_S.
        """
        page_seed = self.begin_reset(seed, options)
        png, text = _loop.run(self._open(self.task, page_seed), self._loop, RESET_TIMEOUT_S, f"reset of {self.spec_id}")
        return self.end_reset(png, text, page_seed)

    def step(self, action: Any) -> tuple[dict, float, bool, bool, dict]:
        """One action (any form `_spaces.to_action` takes): executed, settled, observed, checked.

        Raises InvalidAction (a ValueError) when the action was refused: nothing ran, the step was not counted;
        RuntimeError before `reset`, after the episode ended, or after `close`."""
        prepared = self.prepare(action)
        outcome = _loop.run(self._act(prepared), self._loop, self.config.step_timeout_s + WAIT_SLACK_S,
                            f"step of {self.spec_id}")
        return self.end_step(prepared, outcome)

    def render(self) -> np.ndarray | None:
        """The latest observation's frame (H×W×3 uint8) with `render_mode="rgb_array"`, else None."""
        if self.render_mode != "rgb_array" or self._frame is None:
            return None
        return self._frame.copy()

    def close(self) -> None:
        """Close the app's page (it goes back to the warm pool, as after a rollout). Idempotent."""
        if self._closed:
            return
        self._closed = True
        with contextlib.suppress(_loop.LoopDied):  # the loop and its browser are gone already: nothing is left to close
            _loop.run(self.app_env.close(), self._loop, RESET_TIMEOUT_S, f"close of {self.spec_id}")

    def _still_open(self, call: str) -> None:
        # The page went back to the warm pool at close(): another environment may be using it now.
        if self._closed:
            raise RuntimeError(f"{call} after close(): make a new environment")

    def ask(self, policy: Policy) -> list[Action]:
        """The actions a `cua.Policy` decides on the current observation, in screen pixels (step them one by one).

        An offline, DOM-reading policy (the heuristic agent, `perturb.SolutionPolicy`) is handed the page, as in
        a rollout. Raises RuntimeError before `reset`; InvalidAction when the policy's reply is unusable.
        """
        self._still_open("ask()")
        if self.task is None:
            raise RuntimeError("ask() before reset(): call reset() first")

        async def decide():
            observation = Observation(task=self.task.description, step=self._steps + 1, max_steps=self._budget,
                                      screenshot=self.app_env.screenshot, viewport_width=self.viewport.width,
                                      viewport_height=self.viewport.height,
                                      page=self.app_env.page if policy.offline else None)
            return await policy.act(observation)

        decision = _loop.run(decide(), self._loop, self.config.model_timeout_s + WAIT_SLACK_S, f"{policy.name}'s decision")
        if decision.invalid or not decision.actions:
            raise InvalidAction(f"{policy.name}: {decision.invalid or 'no action'}")
        width, height = self.viewport.width, self.viewport.height
        try:
            return [action_to_screen(action, policy.coordinate_space, width, height) for action in decision.actions]
        except OffScreenPoint as error:
            raise InvalidAction(f"{policy.name}: {error}") from None

    # ---- the parts the vector environment shares -------------------------------------------------------

    @property
    def spec_id(self) -> str:
        return self.spec.id if self.spec is not None else self.app.spec.id

    def prepare(self, action: Any) -> Prepared:
        """The action `step` would execute, checked: refused (InvalidAction) before anything runs."""
        self._still_open("step()")
        if self.task is None:
            raise RuntimeError("step() before reset(): call reset() first")
        if self._ended:
            raise RuntimeError("the episode has ended (terminated or truncated): call reset()")
        prepared = to_action(action, self.uitars_space)
        try:
            place_action(prepared.action, prepared.space, self.viewport.width, self.viewport.height)
        except OffScreenPoint as error:
            raise InvalidAction(str(error)) from None
        except KeyError as error:
            raise InvalidAction(f"coordinate space: {error.args[0]}") from None
        return prepared

    def _choose(self, seed: int | None, options: dict[str, Any] | None) -> tuple[Task, int]:
        chosen = (options or {}).get("task")
        if chosen is not None:
            task = next((t for t in self.tasks if t.id == chosen), None)
            if task is None:
                why = self.unoffered.get(chosen, f"not one of {', '.join(t.id for t in self.tasks)}")
                raise TaskNotOffered(f"options['task'] {chosen!r} is not offered by {self.spec_id}: {why}")
        else:
            task = self.tasks[int(self.np_random.integers(len(self.tasks)))] if len(self.tasks) > 1 else self.tasks[0]
        page_seed = int(seed) if seed is not None else int(self.np_random.integers(0, 2**31 - 1))
        return task, page_seed

    def begin_reset(self, seed: int | None, options: dict[str, Any] | None) -> int:
        """The synchronous half of `reset`: seed the generator, choose the task, set the step budget; the page's seed."""
        self._still_open("reset()")
        super().reset(seed=seed)
        task, page_seed = self._choose(seed, options)
        self.task, self._steps, self._ended, self.last_step = task, 0, False, None
        level_budget = DEFAULT_LEVELS[task.level].max_steps if task.level is not None else UNLEVELLED_MAX_STEPS
        self._budget = level_budget if self.max_steps_override is None else self.max_steps_override
        self.app_env.config = self.config.model_copy(update={"max_steps": self._budget})
        return page_seed

    def end_reset(self, png: bytes, text: str | None, page_seed: int) -> tuple[dict, dict]:
        """The observation and info of a reset whose page `_open` loaded."""
        self._frame = decode_png(png, self.viewport)
        return self._observation(self._frame, text), {
            "app_id": self.app.spec.id, "task_id": self.task.id, "seed": page_seed, "max_steps": self._budget,
            "serving": self.serving.name}

    async def _open(self, task: Task, page_seed: int) -> tuple[bytes, str | None]:
        observation = await self.app_env.reset(self.app.html, task.description, self._checkers[task.id],
                                               seed=page_seed, fixed_clock=self.fixed_clock)
        return observation.screenshot, await self._read_text()

    async def _read_text(self) -> str | None:
        if self.text_max_chars is None:
            return None
        try:
            return (await self.app_env.visible_text(self.text_max_chars))[0]
        except Exception:
            return ""  # a crashed or hung page has no text to read; the step says what happened

    async def _act(self, prepared: Prepared) -> Outcome:
        record = Step(index=0, raw_text=prepared.raw_text, thought=prepared.thought)
        limit = self.config.step_timeout_s
        try:
            result = await asyncio.wait_for(self.app_env.step(prepared.action, prepared.space, record=record,
                                                              deadline=time.monotonic() + limit), limit)
        except (TimeoutError, asyncio.TimeoutError):
            return Outcome(None, failure=("timeout", f"the step did not finish within {limit:g} s"))
        except Exception as error:  # a hung renderer, a crashed or closed page: the episode cannot go on
            reason = "timeout" if type(error).__name__ == "ScreenshotTimeout" else "error"
            return Outcome(None, failure=(reason, f"{type(error).__name__}: {str(error).strip()[:300]}"))
        return Outcome(result, await self._read_text())

    def end_step(self, prepared: Prepared, outcome: Outcome) -> tuple[dict, float, bool, bool, dict]:
        """The Gymnasium step tuple of an outcome (decoding the screenshot once, only when it changed)."""
        info: dict[str, Any] = {"app_id": self.app.spec.id, "task_id": self.task.id}
        if outcome.result is None:
            self._ended = True
            reason, error = outcome.failure
            info.update(checker={"passed": False, "reason": None}, termination=reason, step=None, error=error)
            return self._observation(self._frame.copy(), ""), 0.0, False, True, info
        result = outcome.result
        self._steps += 1
        self.last_step = result.step
        passed = bool(result.check.passed)
        finished = prepared.action.kind == "finished"
        if not finished:  # `finished` executes nothing: the page is the last frame
            self._frame = decode_png(result.observation.screenshot, self.viewport)
        terminated = passed or finished
        truncated = not terminated and self._steps >= self._budget
        termination = "success" if passed else "finished" if finished else "max_steps" if truncated else None
        self._ended = terminated or truncated
        record = result.step.model_dump(mode="json", exclude=STEP_RECORD_EXCLUDE)
        record["notes"] = [_DURATION.sub("N ms", note) for note in record["notes"]]
        info.update(checker={"passed": passed, "reason": result.check.reason}, termination=termination, step=record)
        frame = self._frame if not finished else self._frame.copy()
        return self._observation(frame, outcome.text), 1.0 if passed else 0.0, terminated, truncated, info

    def _observation(self, frame: np.ndarray, text: str | None) -> dict[str, Any]:
        observation: dict[str, Any] = {"screenshot": frame, "goal": in_charset(self.task.description, 2_000)}
        if self.text_max_chars is not None:
            observation["text"] = in_charset(text or "", self.text_max_chars)
        return observation
