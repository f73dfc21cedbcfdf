"""Judges by name: `get_judge` looks 'offline' and 'model' up in `JUDGES`, as every provider is looked up."""

from __future__ import annotations

import pytest

from llm import ModelClient, UnknownModelError
from llm.testing import ScriptedOpenAIServer, scripted_registry
from verifier.judge import JUDGES, MODEL_JUDGE, OFFLINE_JUDGE, ModelJudge, OfflineJudge, get_judge, prompt_sha256


def test_the_judges_are_registered_lazily_by_name():
    assert JUDGES.names() == [MODEL_JUDGE, OFFLINE_JUDGE] == ["model", "offline"]
    assert {name: entry.target for name, entry in JUDGES.lazy_entries().items()} == {
        "model": "verifier.judge._model:ModelJudge", "offline": "verifier.judge._offline:OfflineJudge"}
    assert JUDGES.get("model") is ModelJudge and JUDGES.get("offline") is OfflineJudge


def test_a_model_role_gets_the_model_judge_and_an_offline_model_the_offline_one():
    with ScriptedOpenAIServer() as server:
        client = ModelClient(scripted_registry(server), cache=False)
        judge = get_judge("judge", "flow", client)
        assert type(judge) is ModelJudge and (judge.name, judge.mode) == ("scripted", "flow")
        assert judge.prompt_sha256 == prompt_sha256("flow")
        offline_role = ModelClient(client.registry.with_roles({"judge": "offline"}), cache=False)
        assert type(get_judge("judge", "screenshot", offline_role)) is OfflineJudge
    assert type(get_judge("offline")) is OfflineJudge


def test_the_errors_are_those_of_before():
    with pytest.raises(ValueError, match=r"^judge mode 'video' is not one of screenshot, flow$"):
        get_judge("offline", "video")
    with pytest.raises(ValueError, match=r"^the offline judge reads the final page's text only: use mode 'screenshot', "
                                         r"not 'flow'$"):
        get_judge("offline", "flow")
    with ScriptedOpenAIServer() as server:
        client = ModelClient(scripted_registry(server), cache=False)
        with pytest.raises(UnknownModelError) as caught:
            get_judge("no-such-model", client=client)
        with pytest.raises(UnknownModelError) as expected:
            client.registry.get("no-such-model")
    assert str(caught.value) == str(expected.value)


@pytest.fixture
def a_stand_in_offline_judge():
    """The 'offline' entry swapped for a subclass for one test, then put back."""

    class StandInJudge(OfflineJudge):
        pass

    JUDGES.add(OFFLINE_JUDGE, StandInJudge, replace=True)
    try:
        yield StandInJudge
    finally:
        JUDGES.register_lazy(OFFLINE_JUDGE, "verifier.judge._offline:OfflineJudge", replace=True)


def test_get_judge_builds_what_the_registry_holds(a_stand_in_offline_judge):
    assert type(get_judge("offline")) is a_stand_in_offline_judge
