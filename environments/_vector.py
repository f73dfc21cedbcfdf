"""N app environments as one Gymnasium `VectorEnv`: one event loop, one browser, steps run at once.

Not N processes with N browsers: the sub-environments are `AppGymEnv`s on the room's one loop, each
with its own page on the one browser, and a vector `step` runs their steps concurrently there
(`asyncio.gather`) — while one page settles another acts. Batching and autoreset are Gymnasium's
(the `SyncVectorEnv` rules: `NEXT_STEP` by default — a sub-environment that ended is reset by the next
`step`, whose action for it is ignored; `SAME_STEP` resets it in the same call and keeps the last
observation and info in `final_obs` / `final_info`; `DISABLED` leaves it to `reset(options={"reset_mask": …})`),
so its results are those of N single environments stepped one after another.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from copy import deepcopy
from typing import Any

import gymnasium
import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space, concatenate, create_empty_array, iterate

from . import _loop
from ._env import RESET_TIMEOUT_S, WAIT_SLACK_S, AppGymEnv
from ._spaces import InvalidAction


class AppVectorEnv(VectorEnv):
    """`gymnasium.make_vec("aui/<app>-v0", num_envs=N, vectorization_mode="vector_entry_point", **env_kwargs)`,
    or `make_vector([...])` for N different apps or tasks. Every sub-environment must have the same viewport
    and observation fields (their spaces are batched)."""

    metadata = {"render_modes": ["rgb_array"], "render_fps": 1, "autoreset_mode": AutoresetMode.NEXT_STEP}

    def __init__(self, app_id: str | None = None, *, num_envs: int = 1, envs: Sequence[AppGymEnv] | None = None,
                 autoreset_mode: str | AutoresetMode = AutoresetMode.NEXT_STEP, **env_kwargs: Any):
        if envs is None:
            if app_id is None:
                raise ValueError("AppVectorEnv needs an app_id (with num_envs) or envs")
            env_kwargs.pop("max_episode_steps", None)  # Gymnasium's TimeLimit: the budget is `max_steps`
            envs = [AppGymEnv(app_id, **env_kwargs) for _ in range(num_envs)]
        self.envs = list(envs)
        if not self.envs:
            raise ValueError("a vector environment needs at least one environment")
        self.num_envs = len(self.envs)
        self.autoreset_mode = AutoresetMode(autoreset_mode)
        self.metadata = {**self.metadata, "autoreset_mode": self.autoreset_mode}
        self.render_mode = self.envs[0].render_mode
        self.single_observation_space = self.envs[0].observation_space
        self.single_action_space = self.envs[0].action_space
        for index, env in enumerate(self.envs):
            if env.observation_space != self.single_observation_space or env.action_space != self.single_action_space:
                raise ValueError(f"environment {index} ({env.spec_id}) has other spaces than environment 0: give every "
                                 "one the same viewport and text_observation")
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self._loop = self.envs[0]._loop
        self._observations = create_empty_array(self.single_observation_space, n=self.num_envs, fn=np.zeros)
        self._autoreset = np.zeros(self.num_envs, dtype=np.bool_)

    def reset(self, *, seed: int | Sequence[int | None] | None = None,
              options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        """Reset every sub-environment (or those of `options["reset_mask"]`) at once; an int seed gives seed + i."""
        super().reset(seed=seed if isinstance(seed, int) else None)
        seeds = [None] * self.num_envs if seed is None else [seed + i for i in range(self.num_envs)] \
            if isinstance(seed, int) else list(seed)
        if len(seeds) != self.num_envs:
            raise ValueError(f"{len(seeds)} seeds for {self.num_envs} environments")
        options = dict(options or {})
        mask = options.pop("reset_mask", None)
        chosen = np.ones(self.num_envs, dtype=np.bool_) if mask is None else np.asarray(mask, dtype=np.bool_)
        if chosen.shape != (self.num_envs,) or not chosen.any():
            raise ValueError(f"options['reset_mask'] must be {self.num_envs} booleans, at least one True")
        indices = [i for i in range(self.num_envs) if chosen[i]]
        observations: list[Any] = [None] * self.num_envs
        infos = self._reset_all(indices, [seeds[i] for i in indices], options or None, observations, {})
        self._autoreset[indices] = False
        self._store(observations)
        return deepcopy(self._observations), infos

    def step(self, actions: Any) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """One action per sub-environment (a batch of the action space, or a sequence of any form `step` takes).

        Raises InvalidAction when one of the actions was refused (its index is named); no environment did anything."""
        per_env = list(actions) if isinstance(actions, (list, tuple)) else list(iterate(self.action_space, actions))
        if len(per_env) != self.num_envs:
            raise InvalidAction(f"{len(per_env)} actions for {self.num_envs} environments")
        if self.autoreset_mode == AutoresetMode.DISABLED and self._autoreset.any():
            raise RuntimeError(f"environments {np.flatnonzero(self._autoreset).tolist()} have ended: reset them "
                               "(options={'reset_mask': …}) before stepping (autoreset_mode DISABLED)")
        resetting = self._autoreset.copy() if self.autoreset_mode == AutoresetMode.NEXT_STEP else np.zeros_like(self._autoreset)
        prepared = {}
        for i, env in enumerate(self.envs):
            if not resetting[i]:
                try:
                    prepared[i] = env.prepare(per_env[i])
                except InvalidAction as error:
                    raise InvalidAction(f"environment {i} ({env.spec_id}): {error}") from None
        return self._step_all(prepared, resetting)

    def render(self) -> tuple[np.ndarray | None, ...]:
        return tuple(env.render() for env in self.envs)

    def close_extras(self, **kwargs: Any) -> None:
        for env in self.envs:
            env.close()

    # ---- on the loop ----------------------------------------------------------------------------

    def _reset_all(self, indices: list[int], seeds: list[int | None], options: dict | None, observations: list[Any],
                   infos: dict[str, Any]) -> dict[str, Any]:
        """Reset the sub-environments `indices` at once: their observations into `observations`, `infos` with theirs."""
        page_seeds = [self.envs[i].begin_reset(seed, options) for i, seed in zip(indices, seeds)]

        async def open_all():
            return await asyncio.gather(*(self.envs[i]._open(self.envs[i].task, s) for i, s in zip(indices, page_seeds)))

        opened = _loop.run(open_all(), self._loop, RESET_TIMEOUT_S, f"reset of {len(indices)} environments")
        for i, (png, text), page_seed in zip(indices, opened, page_seeds):
            observations[i], info = self.envs[i].end_reset(png, text, page_seed)
            infos = self._add_info(infos, info, i)
        return infos

    def _step_all(self, prepared: dict, resetting: np.ndarray):
        stepping = sorted(prepared)
        resets = [i for i in range(self.num_envs) if resetting[i]]
        page_seeds = {i: self.envs[i].begin_reset(None, None) for i in resets}

        async def run_all():
            steps = [self.envs[i]._act(prepared[i]) for i in stepping]
            opens = [self.envs[i]._open(self.envs[i].task, page_seeds[i]) for i in resets]
            return await asyncio.gather(*steps, *opens)

        limit = max(env.config.step_timeout_s for env in self.envs) + WAIT_SLACK_S + RESET_TIMEOUT_S
        done = _loop.run(run_all(), self._loop, limit, f"step of {self.num_envs} environments")
        observations: list[Any] = [None] * self.num_envs
        rewards = np.zeros(self.num_envs, dtype=np.float64)
        terminations = np.zeros(self.num_envs, dtype=np.bool_)
        truncations = np.zeros(self.num_envs, dtype=np.bool_)
        infos: dict[str, Any] = {}
        same_step = self.autoreset_mode == AutoresetMode.SAME_STEP
        ended = []
        for i, outcome in zip(stepping, done[: len(stepping)]):
            observations[i], rewards[i], terminations[i], truncations[i], info = self.envs[i].end_step(prepared[i], outcome)
            if same_step and (terminations[i] or truncations[i]):
                infos = self._add_info(infos, {"final_obs": observations[i], "final_info": info}, i)
                ended.append(i)
            else:
                infos = self._add_info(infos, info, i)
        for i, (png, text) in zip(resets, done[len(stepping):]):
            observations[i], info = self.envs[i].end_reset(png, text, page_seeds[i])
            infos = self._add_info(infos, info, i)
        if ended:  # SAME_STEP: the ended ones start their next episode now
            infos = self._reset_all(ended, [None] * len(ended), None, observations, infos)
        self._autoreset = np.logical_or(terminations, truncations) & (not same_step)
        self._store(observations)
        return deepcopy(self._observations), rewards, terminations, truncations, infos

    def _store(self, observations: list[Any]) -> None:
        """Batch the new observations; a sub-environment without one keeps its last."""
        kept = list(iterate(self.observation_space, self._observations))
        fresh = [observation if observation is not None else kept[i] for i, observation in enumerate(observations)]
        self._observations = concatenate(self.single_observation_space, fresh, self._observations)


def make_vector(envs: Sequence[str | tuple[str, dict[str, Any]]], *,
                autoreset_mode: str | AutoresetMode = AutoresetMode.NEXT_STEP, **common: Any) -> AppVectorEnv:
    """A vector environment of different apps or tasks on one browser: each entry an id, or (id, its kwargs);
    `common` kwargs go to every one (e.g. `viewport`, `text_observation`).

        make_vector([("aui/unit-converter-v0", {"task": "swap-to-feet-metres"}), "aui/trip-splitter-v0"])
    """
    entries = [(entry, {}) if isinstance(entry, str) else entry for entry in envs]
    made = [gymnasium.make(name, disable_env_checker=True, **{**common, **own}).unwrapped for name, own in entries]
    return AppVectorEnv(envs=made, autoreset_mode=autoreset_mode)
