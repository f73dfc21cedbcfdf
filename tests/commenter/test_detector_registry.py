"""Detectors by name: `get_detector` looks each name up in `DETECTORS`, as every provider is looked up."""

from __future__ import annotations

import pytest

from commenter.detector import (
    COMMENTER_DETECTOR,
    DETECTORS,
    MODEL_DETECTOR,
    OFFLINE_BLIND_DETECTOR,
    OFFLINE_DETECTOR,
    OFFLINE_DETECTORS,
    ModelDetector,
    get_detector,
    prompt_sha256,
)
from llm import ModelClient, UnknownModelError
from llm.testing import ScriptedOpenAIServer, scripted_registry


def test_every_offline_detector_and_the_model_one_are_registered_by_name():
    assert set(DETECTORS.names()) == {*OFFLINE_DETECTORS, MODEL_DETECTOR}
    assert OFFLINE_DETECTORS == ("offline", "offline-blind", "commenter")
    assert {name: entry.target for name, entry in DETECTORS.lazy_entries().items()} == {
        "model": "commenter.detector._model:ModelDetector"}


@pytest.mark.parametrize("name, uses_reference", [(OFFLINE_DETECTOR, True), (OFFLINE_BLIND_DETECTOR, False),
                                                  (COMMENTER_DETECTOR, False)])
def test_an_offline_name_gets_its_detector_without_a_client(name, uses_reference):
    detector = get_detector(name)
    assert (detector.name, detector.offline, detector.uses_reference) == (name, True, uses_reference)


def test_a_model_role_gets_the_model_detector_and_an_offline_model_the_rules():
    with ScriptedOpenAIServer() as server:
        client = ModelClient(scripted_registry(server), cache=False)
        detector = get_detector("detector", client)
        assert type(detector) is ModelDetector
        assert (detector.name, detector.offline, detector.uses_reference) == ("scripted", False, False)
        assert detector.prompt_sha256 == prompt_sha256()
        offline_role = ModelClient(client.registry.with_roles({"detector": "offline"}), cache=False)
        rules = get_detector("detector", offline_role)
        assert (rules.name, rules.offline, rules.uses_reference) == (OFFLINE_DETECTOR, True, True)


def test_the_errors_are_those_of_before():
    with pytest.raises(ValueError, match=r"^detector 'detector' is a model: it needs a model client "
                                         r"\(or use one of offline, offline-blind, commenter\)$"):
        get_detector("detector")
    with ScriptedOpenAIServer() as server:
        client = ModelClient(scripted_registry(server), cache=False)
        with pytest.raises(UnknownModelError) as caught:
            get_detector("no-such-model", client)
        with pytest.raises(UnknownModelError) as expected:
            client.registry.get("no-such-model")
    assert str(caught.value) == str(expected.value)


@pytest.fixture
def a_stand_in_blind_detector():
    """The 'offline-blind' entry swapped for one test, then put back."""
    original = DETECTORS.get(OFFLINE_BLIND_DETECTOR)

    class StandIn:
        name, offline, uses_reference = "stand-in", True, False

    DETECTORS.add(OFFLINE_BLIND_DETECTOR, StandIn, replace=True)
    try:
        yield StandIn
    finally:
        DETECTORS.add(OFFLINE_BLIND_DETECTOR, original, replace=True)


def test_get_detector_builds_what_the_registry_holds(a_stand_in_blind_detector):
    assert type(get_detector(OFFLINE_BLIND_DETECTOR)) is a_stand_in_blind_detector
