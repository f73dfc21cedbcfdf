"""A vector environment of N apps and tasks on one loop and one browser, stepped at once: its results are those of
N single environments stepped one after another by Gymnasium's own `SyncVectorEnv`, autoreset included."""

from __future__ import annotations

import threading

import gymnasium
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode, SyncVectorEnv
from gymnasium.vector.utils import concatenate, create_empty_array

from cua import Action, Point
from environments import DIRECTIONS, KINDS, AppVectorEnv, InvalidAction, make_vector, register_apps
from perturb import SolutionPolicy
from tests.environments.tiny_apps import write_counter_app

STEPS = 6
MAX_DELTA = 2
"""After a step, frames may differ by the antialiasing of an edge Chromium repainted (at most 2 levels of 255 in
a channel: bench/fidelity_known.json's tolerance, seen here on a select's rounded corner); nothing one can see."""


def same_frames(a: np.ndarray, b: np.ndarray) -> bool:
    return a.shape == b.shape and int(np.abs(a.astype(np.int16) - b.astype(np.int16)).max()) <= MAX_DELTA


@pytest.fixture(scope="module")
def counter(tmp_path_factory) -> str:
    [name] = register_apps(write_counter_app(tmp_path_factory.mktemp("apps"), tag="vector"), namespace="vec-test")
    return name


def members(counter: str) -> list[tuple[str, dict]]:
    return [(counter, {"task": "add-two"}), ("aui/unit-converter-v0", {"task": "swap-to-feet-metres"}),
            ("aui/unit-converter-v0", {"task": "five-decimals"})]


def as_space(action: Action, template: dict) -> dict:
    """`action` in the action space's form (screen pixels); fields it does not use keep the template's values."""
    out = {**template, "kind": np.int64(KINDS.index(action.kind))}
    if action.point is not None:
        out["point"] = np.array([action.point.x, action.point.y], dtype=np.float32)
    if action.end is not None:
        out["end"] = np.array([action.end.x, action.end.y], dtype=np.float32)
    if action.direction is not None:
        out["direction"] = np.int64(DIRECTIONS.index(action.direction))
    if action.amount is not None:
        out["amount"] = np.array([action.amount], dtype=np.float32)
    out["keys"] = " ".join(action.keys) or template["keys"]
    out["text"] = action.text if action.text is not None else template["text"]
    return out


def scripts(counter: str, template: dict) -> list[list[dict]]:
    """Each member's reference solution as space actions (decided once on a single environment), padded with moves."""
    made = []
    for name, kwargs in members(counter):
        env = gymnasium.make(name, **kwargs)
        task = env.unwrapped.tasks[0]
        env.reset(seed=0)
        policy, actions, ended = SolutionPolicy(task.solution), [], False
        while not ended:
            for action in env.unwrapped.ask(policy):
                actions.append(as_space(action, template))
                ended = any(env.step(action)[2:4])
                if ended:
                    break
        env.close()
        made.append((actions + [as_space(Action(kind="move", point=Point(x=600, y=500)), template)] * STEPS)[:STEPS])
    return made


def test_the_vector_environments_results_equal_n_single_environments(counter):
    ours = make_vector(members(counter))
    theirs = SyncVectorEnv([lambda name=name, kwargs=kwargs: gymnasium.make(name, **kwargs) for name, kwargs in members(counter)])
    try:
        assert ours.single_action_space == theirs.single_action_space
        assert ours.single_observation_space == theirs.single_observation_space
        ours.single_action_space.seed(0)
        per_env = scripts(counter, ours.single_action_space.sample())
        first_ours, info_ours = ours.reset(seed=3)
        first_theirs, info_theirs = theirs.reset(seed=3)
        assert np.array_equal(first_ours["screenshot"], first_theirs["screenshot"])  # first frames: byte for byte
        assert list(info_ours["seed"]) == list(info_theirs["seed"]) == [3, 4, 5]
        ended_at, rewards = {}, np.zeros(3)
        for step in range(STEPS):
            batch = concatenate(ours.single_action_space, [per_env[i][step] for i in range(3)],
                                create_empty_array(ours.single_action_space, n=3))
            a, b = ours.step(batch), theirs.step(batch)
            assert same_frames(a[0]["screenshot"], b[0]["screenshot"]), step
            assert a[0]["goal"] == b[0]["goal"]
            assert np.array_equal(a[1], b[1]) and np.array_equal(a[2], b[2]) and np.array_equal(a[3], b[3]), step
            for key in ("task_id", "termination", "seed"):
                assert list(a[4].get(key, [])) == list(b[4].get(key, [])), (step, key)
            assert list(a[4]["checker"]["passed"]) == list(b[4]["checker"]["passed"]), step
            ended_at.update({i: step for i in np.flatnonzero(a[2]) if i not in ended_at})
            rewards += a[1]
        # every task ended with its one reward and, as Gymnasium autoresets, started again on the next step
        assert sorted(ended_at) == [0, 1, 2] and list(rewards) == [1.0, 1.0, 1.0]
        assert ours.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP
    finally:
        ours.close()
        theirs.close()


def test_make_vec_gives_n_pages_of_one_browser_on_one_loop():
    envs = gymnasium.make_vec("aui/unit-converter-v0", num_envs=3, vectorization_mode="vector_entry_point",
                              task="swap-to-feet-metres")
    try:
        assert isinstance(envs.unwrapped, AppVectorEnv) and envs.num_envs == 3
        observations, infos = envs.reset(seed=0)
        assert observations["screenshot"].shape == (3, 720, 1280, 3) and list(infos["seed"]) == [0, 1, 2]
        pages = [env.app_env.page for env in envs.unwrapped.envs]
        assert len({id(page) for page in pages}) == 3 and len({id(page.context.browser) for page in pages}) == 1
        assert [t.name for t in threading.enumerate()].count("environments-loop") == 1
        click = {"type": "click", "x": 10, "y": 10, "button": "left"}
        with pytest.raises(InvalidAction, match=r"environment 1 \(unit-converter\): point \(5000, 10\) is off the screen"):
            envs.step([click, {"type": "click", "x": 5000, "y": 10, "button": "left"}, click])
        _, _, _, _, infos = envs.step([click, click, click])
        assert list(infos["step"]["index"]) == [1, 1, 1]  # the refused batch ran nowhere
    finally:
        envs.close()


def test_same_step_autoreset_keeps_the_final_observation_and_starts_the_next_episode(counter):
    envs = make_vector([(counter, {"task": "add-two"})] * 2, autoreset_mode=AutoresetMode.SAME_STEP, max_steps=1)
    try:
        envs.reset(seed=0)
        observations, rewards, terminations, truncations, infos = envs.step([Action(kind="move", point=Point(x=5, y=5))] * 2)
        assert list(truncations) == [True, True] and infos["_final_obs"].all()
        assert list(infos["final_info"]["termination"]) == ["max_steps", "max_steps"]
        assert list(infos["seed"]) and infos["_seed"].all()  # the new episodes' reset infos
        envs.step([Action(kind="move", point=Point(x=5, y=5))] * 2)  # no reset needed in between
    finally:
        envs.close()
