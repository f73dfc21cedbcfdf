"""Gymnasium's own checker (`gymnasium.utils.env_checker.check_env`) passes on every bundled app.

It resets with seeds and without, steps sampled actions twice from the same seed and compares the
observations, rewards and infos, checks that no two calls share data, renders and closes. Its only
warning here is its advice to normalise Box action spaces to [-1, 1]: ours are in screen pixels, as
MiniWoB++'s are (a click lands on the pixel it names); any other warning fails the test.

Its sampled actions are often `wait`s, each watching the still page for UI-TARS's whole 5 s (4 of its 5 steps on
memory-garden: 20 of its 23 s); the environments here watch for 0.5 s (`RolloutConfig.wait_cap_ms`, which
tests/environments/test_actions.py checks): the API under test is the same, the suite 3 minutes shorter.
"""

from __future__ import annotations

import warnings

import gymnasium
import pytest
from gymnasium.utils.env_checker import check_env

import environments

ADVICE = "For Box action spaces, we recommend using a symmetric and normalized space"


@pytest.mark.parametrize("name", environments.BUNDLED_IDS)
def test_gymnasiums_env_checker_passes(name):
    env = gymnasium.make(name, render_mode="rgb_array", rollout_config={"wait_cap_ms": 500})
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            check_env(env.unwrapped)
        assert [str(w.message) for w in caught if ADVICE not in str(w.message)] == []
    finally:
        env.close()
