"""`reset(seed=s)` serves the page seeded with `s`: the same seed gives the same first observation, byte for byte."""

from __future__ import annotations

import gymnasium
import pytest

import environments
from environments import register_apps
from tests.environments.tiny_apps import write_counter_app


@pytest.mark.parametrize("name", environments.BUNDLED_IDS)
def test_the_same_seed_gives_the_same_first_observation_on_every_bundled_app(name):
    first = gymnasium.make(name)
    second = gymnasium.make(name)  # another environment, so another page: nothing is carried over
    try:
        one, info = first.reset(seed=11)
        first.step({"kind": "scroll", "point": {"x": 640, "y": 360}, "direction": "down"})  # the page moves on
        again, _ = first.reset(seed=11)
        other, _ = second.reset(seed=11)
        assert info["seed"] == 11
        assert one["screenshot"].tobytes() == again["screenshot"].tobytes() == other["screenshot"].tobytes()
        assert one["goal"] == again["goal"] == other["goal"]
    finally:
        first.close()
        second.close()


def test_the_seed_is_the_pages_and_an_unseeded_reset_draws_one_from_the_generator(tmp_path):
    [name] = register_apps(write_counter_app(tmp_path, tag="seeds"), namespace="seed-test")
    env = gymnasium.make(name, task="add-two", text_observation=True)
    try:
        lucky = {seed: env.reset(seed=seed)[0]["text"].split("lucky ")[1] for seed in (1, 2, 1)}
        assert len(lucky) == 2 and lucky[1] != lucky[2]  # the app's Math.random follows the seed
        env.reset(seed=5)
        drawn = [env.reset()[1]["seed"] for _ in range(2)]
        env.reset(seed=5)
        assert [env.reset()[1]["seed"] for _ in range(2)] == drawn and drawn[0] != drawn[1]
    finally:
        env.close()
