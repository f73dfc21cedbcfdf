"""Every bundled task's reference solution, played through `env.step` as coordinate actions, earns reward 1 on
the step its checker turns true — and 0 on every step before it.

The solution's selector-level steps become what a person would do (`perturb.SolutionPolicy`: a click at an
element's centre, a click + select-all + typing for a field, the option of a drop-down drawn in the page; and
for an exact value on a slider, the arrow keys after the click: `environments.ReferencePolicy`), decided on the environment's
page (`env.unwrapped.ask`) and stepped one by one.
"""

from __future__ import annotations

import gymnasium
import pytest

import environments

MAX_ACTIONS = 60


@pytest.mark.parametrize("name", environments.BUNDLED_IDS)
def test_every_reference_solution_earns_reward_one_on_the_step_its_checker_turns_true(name):
    env = gymnasium.make(name, task="all", max_steps=MAX_ACTIONS)
    results = {}
    try:
        assert env.unwrapped.unoffered == {}  # every bundled task's checker is proven
        for task in env.unwrapped.tasks:
            env.reset(seed=0, options={"task": task.id})
            policy = environments.ReferencePolicy(task.solution)
            rewards, passed, ended = [], [], False
            while not ended:
                for action in env.unwrapped.ask(policy):
                    _, reward, terminated, truncated, info = env.step(action)
                    rewards.append(reward)
                    passed.append(info["checker"]["passed"])
                    ended = terminated or truncated
                    if ended:
                        break
            results[task.id] = (info["termination"], rewards.count(1.0), passed.index(True) if True in passed else None,
                                len(rewards) - 1)
    finally:
        env.close()
    # success, one reward, given on the step the checker first passed — the last one
    assert {task: result for task, result in results.items() if result[0] != "success" or result[1] != 1
            or result[2] != result[3]} == {}
