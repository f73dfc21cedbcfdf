"""One route to build a policy (`get_policy` asks the class whether it is `offline`), and one owner
that closes it: the rollout, exactly once, however the episode ends."""

import asyncio

import pytest

from cua import Action, Observation, Point, Policy, PolicyDecision, RolloutConfig, TerminationReason, rollout
from cua.policies import get_policy, is_offline_policy, policy_model
from llm import ModelClient, ModelConfig, ModelConfigError, ModelRegistry, UnknownModelError
from llm.testing import ScriptedOpenAIServer, scripted_registry
from tests.cua.cua_lab import INC_BUTTON, LAB, count_checker

FAST = RolloutConfig(max_steps=6, step_timeout_s=20, model_timeout_s=10, episode_timeout_s=60)


# ---- get_policy: the class's `offline` flag decides whether a model is wanted ------------------


@pytest.mark.parametrize(("name", "options"), [("heuristic", {}), ("scripted", {"script": []})])
def test_an_offline_policy_is_built_without_a_model_whatever_model_is_passed(tmp_path, name, options):
    # None of these reach the policy: an unreadable registry path and a client that is no client.
    policy = get_policy(name, model="gpt-5", models_path=str(tmp_path / "no-such-models.yaml"), client=object(), **options)
    assert policy.offline and policy.model is None
    assert is_offline_policy(name) and policy_model(name, "gpt-5") is None


def _registry_without_agent_roles() -> ModelRegistry:
    return ModelRegistry([ModelConfig(name="writer", provider="offline")], {"coder": "writer"})


@pytest.mark.parametrize(("name", "default_role"), [("uitars", "cua"), ("openai-cua", "openai-cua")])
def test_a_model_policy_without_a_model_is_refused_naming_the_role_it_looked_for(name, default_role):
    """No `model` given and no model behind the policy's default role: refused at construction."""
    assert not is_offline_policy(name) and policy_model(name) == default_role
    client = ModelClient(_registry_without_agent_roles(), cache=False)
    with pytest.raises(UnknownModelError, match=default_role):
        get_policy(name, client=client)


def test_a_model_policy_is_refused_through_its_models_path_too(tmp_path):
    models = tmp_path / "models.yaml"
    models.write_text("models:\n  - name: writer\n    provider: offline\nroles:\n  coder: writer\n", encoding="utf-8")
    with pytest.raises(UnknownModelError, match="cua"):
        get_policy("uitars", models_path=str(models))
    with pytest.raises(ModelConfigError, match="missing.yaml"):
        get_policy("uitars", models_path=str(tmp_path / "missing.yaml"))


def test_a_model_policy_without_a_model_calls_its_default_role():
    with ScriptedOpenAIServer([]) as server:
        client = ModelClient(scripted_registry(server), cache=False)  # every role on the `scripted` model
        assert get_policy("uitars", client=client).model == "scripted"
        assert get_policy("uitars", model="offline", client=client).model == "offline"


# ---- the rollout closes the policy, exactly once ------------------------------------------------


class CountingPolicy(Policy):
    """Clicks the lab's +1 button (or hangs / fails when told); counts its `close` calls."""

    name = "counting"
    offline = True

    def __init__(self, behaviour: str = "click"):
        self.behaviour = behaviour
        self.closes = 0
        self.acting = asyncio.Event()

    @property
    def coordinate_space(self) -> str:
        return "screen"

    async def act(self, observation: Observation) -> PolicyDecision:
        self.acting.set()
        if self.behaviour == "fail":
            raise ConnectionError("endpoint refused")
        if self.behaviour == "hang" and observation.step > 1:
            await asyncio.sleep(3600)  # stands in for a model that never answers: cancelled from outside
        return PolicyDecision(actions=[Action(kind="click", point=Point(x=INC_BUTTON[0], y=INC_BUTTON[1]))])

    async def close(self) -> None:
        self.closes += 1


async def test_the_rollout_closes_the_policy_once_when_the_episode_succeeds(tmp_path):
    policy = CountingPolicy()
    trajectory = await rollout(LAB, "Add three", policy, count_checker, tmp_path, FAST)
    assert trajectory.termination == TerminationReason.success
    assert policy.closes == 1


async def test_the_rollout_closes_the_policy_once_when_the_policy_fails(tmp_path):
    policy = CountingPolicy("fail")
    trajectory = await rollout(LAB, "Add three", policy, count_checker, tmp_path, FAST)
    assert trajectory.termination == TerminationReason.error and "endpoint refused" in trajectory.error
    assert policy.closes == 1


async def test_the_rollout_closes_the_policy_once_when_it_is_cancelled(tmp_path):
    policy = CountingPolicy("hang")
    running = asyncio.create_task(rollout(LAB, "Add three", policy, count_checker, tmp_path, FAST))
    await asyncio.wait_for(policy.acting.wait(), 30)
    while not (tmp_path / "step_001.png").exists():  # the first step is done; the second act hangs
        await asyncio.sleep(0.05)
    running.cancel()
    with pytest.raises(asyncio.CancelledError):
        await running
    assert policy.closes == 1


async def test_the_rollout_closes_the_policy_once_when_there_is_no_browser_context(tmp_path):
    """An error before the episode (here: the output folder cannot be made) still closes it, once."""
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder")
    policy = CountingPolicy()
    trajectory = await rollout(LAB, "Add three", policy, count_checker, blocked / "out", FAST)
    assert trajectory.termination == TerminationReason.error and "Not a directory" in trajectory.error
    assert policy.closes == 1 and not policy.acting.is_set()
