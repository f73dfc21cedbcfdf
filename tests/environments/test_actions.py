"""What `step` takes (the action space, a cua.Action, the JSON form, a UI-TARS reply, a computer-use item), what it
refuses (and that the episode goes on), and what it returns: rewards, termination, truncation, info, observations."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest

from cua import Action, Point, action_from_screen, format_computer_action, format_uitars
from environments import KINDS, InvalidAction, register_apps
from tests.environments.tiny_apps import write_counter_app

ADD = Point(x=120, y=65)  # the centre of the counter's "Add one" button
NAME = Point(x=140, y=190)  # inside the name field


@pytest.fixture(scope="module")
def counter(tmp_path_factory) -> str:
    [name] = register_apps(write_counter_app(tmp_path_factory.mktemp("apps"), tag="actions"), namespace="act-test")
    return name


@pytest.fixture
def env(counter):
    made = gymnasium.make(counter, task="add-two", text_observation=True, render_mode="rgb_array")
    yield made
    made.close()


def space_action(env, kind: str, **fields) -> dict:
    """A sample of the action space with `kind` and the given fields (the rest are whatever the sample holds)."""
    action = env.action_space.sample()
    action["kind"] = KINDS.index(kind)
    for name, value in fields.items():
        action[name] = np.asarray(value, dtype=np.float32) if name in ("point", "end", "amount") else value
    return action


def test_a_uitars_reply_a_computer_use_item_and_every_other_form_drive_the_same_step(env):
    click = Action(kind="click", point=ADD)
    forms = {
        "space": space_action(env, "click", point=[ADD.x, ADD.y]),
        "cua.Action": click,
        "json": {"kind": "click", "point": {"x": ADD.x, "y": ADD.y}},
        "uitars": "Thought: add one.\nAction: " + format_uitars(action_from_screen(click, "uitars-1.5", 1280, 720)),
        "computer-use": format_computer_action(click),
    }
    assert forms["computer-use"] == {"type": "click", "x": 120, "y": 65, "button": "left"}
    results = {}
    for form, action in forms.items():
        first, _ = env.reset(seed=0)
        results[form] = env.step(action)
        assert results[form][0]["text"].split()[:4] == ["Add", "one", "1", "lucky"], form
    screenshots = {form: result[0]["screenshot"].tobytes() for form, result in results.items()}
    assert len(set(screenshots.values())) == 1 and screenshots["space"] != first["screenshot"].tobytes()
    for form, (_, reward, terminated, truncated, info) in results.items():
        assert (reward, terminated, truncated, info["termination"], info["checker"]["passed"]) == (0.0, False, False, None, False)
        assert info["step"]["index"] == 1 and info["step"]["target"]["id"] == "add", form
        # UI-TARS's points are in its 1288×728 space, written to a tenth: (120.8, 65.7) is (120.05, 64.98) here
        assert info["step"]["screen_action"]["point"] == pytest.approx({"x": 120, "y": 65}, abs=0.06), form
    assert results["uitars"][4]["step"]["model_action"]["point"] == {"x": 120.8, "y": 65.7}
    assert results["uitars"][4]["step"]["thought"] == "add one." and results["uitars"][4]["step"]["raw_text"].startswith("Thought")


def test_the_reward_is_one_on_the_step_the_checker_turns_true_and_the_episode_terminates(env):
    env.reset(seed=1)
    _, reward, terminated, truncated, info = env.step({"type": "click", "x": 120, "y": 65, "button": "left"})
    assert (reward, terminated, truncated, info["termination"]) == (0.0, False, False, None)
    _, reward, terminated, truncated, info = env.step("Action: click(start_box='(121,66)')")
    assert (reward, terminated, truncated, info["termination"], info["checker"]) == (
        1.0, True, False, "success", {"passed": True, "reason": None})
    with pytest.raises(RuntimeError, match="episode has ended"):
        env.unwrapped.step(Action(kind="wait"))



def test_a_closed_environment_refuses_to_act_and_leaves_the_page_it_gave_back_alone(counter):
    # close() gives the page back to the warm pool, where the next environment takes it up
    closed, other = (gymnasium.make(counter, task="add-two", text_observation=True) for _ in range(2))
    try:
        closed.reset(seed=0)
        closed.close()
        other.reset(seed=0)
        for call in (lambda: closed.step(Action(kind="click", point=ADD)), lambda: closed.reset(seed=0)):
            with pytest.raises(RuntimeError, match=r"after close\(\)"):
                call()
        observation, reward, terminated, *_ = other.step(Action(kind="move", point=NAME))
        assert (observation["text"].split()[:3], reward, terminated) == (["Add", "one", "0"], 0.0, False)
    finally:
        other.close()

def test_finished_terminates_without_reward_and_the_step_budget_truncates(counter):
    env = gymnasium.make(counter, task="add-two", max_steps=2)
    try:
        observation, info = env.reset(seed=0)
        assert info["max_steps"] == 2
        _, reward, terminated, truncated, info = env.step({"kind": "finished", "text": "I am done"})
        assert (reward, terminated, truncated, info["termination"]) == (0.0, True, False, "finished")
        env.reset(seed=0)
        assert env.step(Action(kind="move", point=NAME))[2:4] == (False, False)
        _, reward, terminated, truncated, info = env.step(Action(kind="move", point=ADD))
        assert (reward, terminated, truncated, info["termination"]) == (0.0, False, True, "max_steps")
    finally:
        env.close()


def test_the_step_budget_defaults_to_the_tasks_level():
    env = gymnasium.make("aui/unit-converter-v0", task="swap-to-feet-metres")  # a paper task: 5 steps
    try:
        assert env.reset(seed=0)[1]["max_steps"] == 5
    finally:
        env.close()


BAD_ACTIONS = [
    ({"kind": "jump", "point": {"x": 1, "y": 1}}, r"field 'kind': Input should be 'click'.*got 'jump'"),
    ({"kind": 12}, r"field 'kind': 12 is not a kind \(0–9"),
    ({"kind": 0}, r"field 'point' is missing \(a 'click' needs it\)"),
    ({"kind": 0, "point": [5000, 10]}, r"point \(5000, 10\) is off the screen: screen coordinates run 0–1280 × 0–720"),
    ({"kind": 0, "point": ["a", 1]}, r"field 'point': expected two numbers"),
    ({"kind": 4, "keys": 7}, r"field 'keys': expected a string, got 7"),
    ({"kind": "click"}, r"'click' needs a point"),
    ("Action: click(point='<point>1500 10</point>')", r"point \(1500, 10\) is off the screen: uitars-1.5 coordinates run 0–1288"),
    ("Action: click(point='<point>10 10</point>') type(content='x')", r"2 actions; a step takes one"),
    ("hello", r"UI-TARS reply: "),
    ({"type": "screenshot"}, r"'screenshot' does nothing here"),
    ({"type": "click", "x": 10, "y": 10, "button": "back"}, r"computer-use item: click with button 'back'"),
    ({"type": "teleport"}, r"computer-use item: not a computer action"),
    ({"text": "hi"}, r"needs 'kind' \(ours\) or 'type' \(computer use\)"),
    (42, r"got int"),
    (["click", 10, 10], r"got list"),
]


def test_a_bad_action_is_refused_with_a_clear_error_and_the_episode_goes_on(env):
    observation, _ = env.reset(seed=0)
    for action, message in BAD_ACTIONS:
        with pytest.raises(InvalidAction, match=message):
            env.step(action)
    assert issubclass(InvalidAction, ValueError)
    after, _, _, _, info = env.step(Action(kind="click", point=ADD))
    assert info["step"]["index"] == 1  # none of the refused ones was counted
    assert after["text"].split()[:3] == ["Add", "one", "1"]  # and none of them ran


def test_the_observation_render_and_a_point_near_the_edge(env):
    observation, info = env.reset(seed=0)
    assert set(observation) == {"screenshot", "goal", "text"} and observation["goal"] == "Add two to the counter."
    assert observation["screenshot"].dtype == np.uint8 and observation["screenshot"].shape == (720, 1280, 3)
    assert observation in env.observation_space
    frame = env.render()
    assert np.array_equal(frame, observation["screenshot"]) and frame is not observation["screenshot"]
    # a point a little past the edge is moved onto it, and the step's record says so
    _, _, _, _, info = env.step({"kind": "move", "point": {"x": 1290, "y": 700}})
    assert info["step"]["screen_action"]["point"]["x"] == pytest.approx(1279.0, abs=1.0) and "clamped" in info["step"]["notes"][0]


def test_a_wait_watches_the_page_as_long_as_the_rollout_config_says(counter):
    """UI-TARS's wait() watches a still page for the whole 5 s; an environment made with a shorter `wait_cap_ms`
    (a learner's choice, and the check_env test's) watches it that long, by the page's own measure."""
    made = gymnasium.make(counter, task="add-two", rollout_config={"wait_cap_ms": 300})
    try:
        made.reset(seed=0)
        made.step({"kind": "wait"})
        notes = made.unwrapped.last_step.notes  # the full record: `info` writes the durations `N ms`
    finally:
        made.close()
    [note] = [note for note in notes if note.startswith("wait:")]
    watched_ms = float(note.removeprefix("wait: no change in ").removesuffix(" ms"))
    assert 300 <= watched_ms < 5_000
    with pytest.raises(ValueError, match="wait_cap_ms"):
        gymnasium.make(counter, task="add-two", rollout_config={"wait_cap_ms": 6_000})
