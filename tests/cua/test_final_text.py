"""The final page's visible text kept in the trajectory (`final_text`): what text-only judges read."""

from __future__ import annotations

import json

from apps_prompts import load_app, reference_html_path
from cua import Action, Point, RolloutConfig, TerminationReason, Trajectory, rollout
from cua.policies import get_policy
from verifier import rollout_checker
from tests.cua.cua_lab import INC_BUTTON, LAB, count_checker

FAST = RolloutConfig(max_steps=6, step_timeout_s=20, model_timeout_s=10, episode_timeout_s=60)

# 30,000 characters of visible text, and a script that lies about `innerText` in the app's world.
LONG_PAGE = """<!doctype html><body><p id="long">{text}</p>
<script>Object.defineProperty(HTMLElement.prototype, 'innerText', {{get() {{ return 'forged by the app'; }}}});</script>
</body>""".format(text="0123456789" * 3_000)


def click(xy) -> Action:
    return Action(kind="click", point=Point(x=xy[0], y=xy[1]))


async def test_a_real_rollout_keeps_the_final_pages_visible_text(tmp_path):
    app = load_app("mortgage-calculator")
    task = app.task("rate-5-percent")
    trajectory = await rollout(reference_html_path(app).read_text(encoding="utf-8"), task.description,
                               get_policy("heuristic"), rollout_checker(task.checker), tmp_path, app_id=app.id,
                               task_id=task.id, expected_outcome=task.expected_outcome)
    assert trajectory.termination == TerminationReason.success, (trajectory.termination, trajectory.error)
    # The task's outcome is on the final page, and so is the app's title.
    assert "5.00%" in trajectory.final_text and "$1,717.83" in trajectory.final_text
    assert "Mortgage calculator" in trajectory.final_text
    assert trajectory.final_text_truncated is False and trajectory.final_text_error is None
    assert Trajectory.load(tmp_path).final_text == trajectory.final_text  # on disk too


async def test_final_text_is_the_page_after_the_last_step(tmp_path):
    policy = get_policy("scripted", script=[click(INC_BUTTON)], repeat=True)
    trajectory = await rollout(LAB, "Add three", policy, count_checker, tmp_path / "three", FAST)
    assert trajectory.success and len(trajectory.steps) == 3
    looked = await rollout(LAB, "Look", get_policy("scripted", script=[Action(kind="finished")]), None,
                           tmp_path / "none", FAST)
    # The lab shows its count beside the button: 3 after three clicks, 0 on a page nobody touched.
    assert "Add one\n3" in trajectory.final_text and "Add one\n0" in looked.final_text


async def test_final_text_is_capped_with_a_flag_and_read_where_the_app_cannot_forge_it(tmp_path):
    policy = get_policy("scripted", script=[Action(kind="finished")])
    trajectory = await rollout(LONG_PAGE, "Read", policy, None, tmp_path, FAST)
    assert trajectory.termination == TerminationReason.finished
    assert len(trajectory.final_text) == FAST.final_text_max_chars == 20_000
    assert trajectory.final_text_truncated is True
    assert trajectory.final_text.startswith("0123456789") and "forged" not in trajectory.final_text
    saved = json.loads((tmp_path / "trajectory.json").read_text(encoding="utf-8"))
    assert saved["final_text_truncated"] is True and len(saved["final_text"]) == 20_000


async def test_a_smaller_cap_and_no_reading_at_all(tmp_path):
    short = await rollout(LONG_PAGE, "Read", get_policy("scripted", script=[Action(kind="finished")]), None,
                          tmp_path / "short", FAST.model_copy(update={"final_text_max_chars": 25}))
    assert short.final_text == "0123456789012345678901234" and short.final_text_truncated
    off = await rollout(LONG_PAGE, "Read", get_policy("scripted", script=[Action(kind="finished")]), None,
                        tmp_path / "off", FAST.model_copy(update={"final_text_max_chars": 0}))
    assert off.final_text is None and off.final_text_error is None and not off.final_text_truncated


def test_a_trajectory_recorded_before_final_text_still_loads(tmp_path):
    old = {"app_id": "a", "task_id": "t", "task": "Do it", "policy": "heuristic", "termination": "finished"}
    (tmp_path / "trajectory.json").write_text(json.dumps(old), encoding="utf-8")
    loaded = Trajectory.load(tmp_path)
    assert loaded.final_text is None and loaded.final_text_truncated is False and loaded.final_text_error is None
