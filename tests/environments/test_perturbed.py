"""Variations and injected defects through `perturb`: a task is offered on a transformed page only when its checker
is proven there (a variation: the variant's proof; a defect: the defect observable and the checker proven with it)."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest

from environments import TaskNotOffered
from perturb import SolutionPolicy, VariationError, solution_prefix

SWAP = {"task": "swap-to-feet-metres"}


def play_solution(env, steps) -> tuple[float, str]:
    """The reference solution (and the variation's own first steps) through `env.step`: total reward, termination."""
    policy, total, ended, info = SolutionPolicy(steps), 0.0, False, {}
    while not ended:
        for action in env.unwrapped.ask(policy):
            _, reward, terminated, truncated, info = env.step(action)
            total += reward
            ended = terminated or truncated
            if ended:
                break
    return total, info["termination"]


@pytest.mark.parametrize("variation", ["dark", "popup"])
def test_a_variation_serves_the_variant_and_its_proven_task_earns_its_reward(variation):
    plain = gymnasium.make("aui/unit-converter-v0", **SWAP)
    varied = gymnasium.make("aui/unit-converter-v0", variation=variation, **SWAP)
    try:
        assert varied.unwrapped.offers["swap-to-feet-metres"].proven
        first, info = varied.reset(seed=0)
        assert info["serving"] == (variation if variation == "dark" else f"{variation}@seed=0")
        assert not np.array_equal(first["screenshot"], plain.reset(seed=0)[0]["screenshot"])
        task = varied.unwrapped.task
        assert play_solution(varied, [*solution_prefix(variation), *task.solution]) == (1.0, "success")
    finally:
        plain.close()
        varied.close()


def test_a_display_defect_is_offered_and_an_interaction_defect_that_breaks_the_task_is_not():
    shown = gymnasium.make("aui/unit-converter-v0", defect="inconsistent-colour", defect_seed=1, **SWAP)
    try:
        assert shown.unwrapped.serving.name == "defect:inconsistent-colour@#swap@seed=1"
        assert "also with defect:inconsistent-colour" in shown.unwrapped.offers["swap-to-feet-metres"].reason
        shown.reset(seed=0)
        assert play_solution(shown, shown.unwrapped.task.solution) == (1.0, "success")
    finally:
        shown.close()
    with pytest.raises(TaskNotOffered, match=r"served as defect:no-response@#swap@seed=0.*kind interaction, which breaks the task"):
        gymnasium.make("aui/unit-converter-v0", defect="no-response", **SWAP)


def test_what_cannot_be_served_is_refused_by_name():
    with pytest.raises(ValueError, match="needs the translator role"):
        gymnasium.make("aui/unit-converter-v0", variation="german", **SWAP)
    with pytest.raises(VariationError, match="unknown variation 'sepia'"):
        gymnasium.make("aui/unit-converter-v0", variation="sepia", **SWAP)
    with pytest.raises(ValueError, match="a variation .* and a defect at once"):
        gymnasium.make("aui/unit-converter-v0", variation="dark", defect="no-response", **SWAP)
    with pytest.raises(ValueError, match="give one task, not 7"):
        gymnasium.make("aui/unit-converter-v0", task="all", defect="no-response")
    with pytest.raises(ValueError, match="unknown defect type 'melting'"):
        gymnasium.make("aui/unit-converter-v0", defect="melting", **SWAP)
    with pytest.raises(ValueError, match=r"no step of the reference solution of task 'swap-to-feet-metres' can carry it on #nope"):
        gymnasium.make("aui/unit-converter-v0", defect="no-response@#nope", **SWAP)
