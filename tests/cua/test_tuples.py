"""Transition tuples of a real rollout: the file matches its trajectory, and the labelling rule holds."""

from __future__ import annotations

import json

from cua import (
    INJECTED_ATTRIBUTE,
    TUPLES_FILE,
    Action,
    BrowserConfig,
    PageTransform,
    Point,
    RolloutConfig,
    Trajectory,
    is_defect_transform,
    read_tuples,
    rollout,
    transition_tuples,
    write_tuples,
)
from cua.policies import get_policy

APP = """<!doctype html><html><body style="margin:0">
<button id="add" style="position:absolute;left:40px;top:40px;width:120px;height:40px">Add</button>
<button id="save" style="position:absolute;left:240px;top:40px;width:120px;height:40px"><b>Save</b></button>
<input id="name" style="position:absolute;left:40px;top:140px;width:200px;height:30px">
<p id="out"></p>
<script>
document.querySelector('#add').onclick = () => { document.querySelector('#out').textContent += '+'; };
document.querySelector('#save').onclick = () => { document.querySelector('#out').textContent = 'saved'; };
</script></body></html>"""

# A stand-in for an injected defect (perturb makes real ones): the bound element is marked, its clicks swallowed.
MARK_AND_SWALLOW = """(mark, value) => {
  const save = document.querySelector('#save');
  save.setAttribute(mark, value);
  for (const type of ['mousedown', 'click']) {  // a mousedown let through would move the focus: a change
    window.addEventListener(type, event => {
      if (event.target.closest('#save')) { event.preventDefault(); event.stopImmediatePropagation(); }
    }, true);
  }
}"""

SCRIPT = [Action(kind="click", point=Point(x=100, y=60)),            # on #add: not the bound element
          Action(kind="click", point=Point(x=300, y=60)),            # on the bold text inside #save: acts on it
          Action(kind="click", point=Point(x=100, y=155)),           # focus the field
          Action(kind="type", text="Ada"),                            # keys go to the focused field
          Action(kind="finished")]


async def _roll(tmp_path, transform=None):
    config = RolloutConfig(max_steps=8, browser=BrowserConfig(transform=transform), stuck_no_change_steps=0)
    return await rollout(APP, "Save the form", get_policy("scripted", script=SCRIPT), None, tmp_path, config,
                         app_id="form", task_id="save")


async def test_the_tuples_file_matches_its_trajectory_and_labels_the_step_on_the_bound_element(tmp_path):
    transform = PageTransform(name="defect:no-response@#save@seed=0", script=MARK_AND_SWALLOW,
                              args=[INJECTED_ATTRIBUTE, "defect:no-response"])
    trajectory = await _roll(tmp_path, transform)
    assert is_defect_transform(trajectory.transform)
    write_tuples(trajectory, tmp_path)
    tuples = read_tuples(tmp_path)
    lines = (tmp_path / TUPLES_FILE).read_text(encoding="utf-8").splitlines()
    assert len(lines) == len(tuples) == 4  # the `finished` step acts on nothing: no tuple
    assert all(json.loads(line)["app_id"] == "form" for line in lines)
    steps = Trajectory.load(tmp_path).steps
    for item, step, before in zip(tuples, steps, [trajectory.initial_screenshot] + [s.screenshot for s in steps]):
        assert (item.step, item.before, item.after) == (step.index, before, step.screenshot)
        assert (tmp_path / item.before).is_file() and (tmp_path / item.after).is_file()
        assert item.action == step.screen_action and item.element == step.target
        assert (item.dom_changed, item.screen_changed) == (step.dom_changed, step.screen_changed)
    assert [item.defect for item in tuples] == ["none", "no-response", "none", "none"]
    assert [item.element.id for item in tuples] == ["add", "save", "name", "name"]  # the click on <b> acts on #save
    assert tuples[1].dom_changed is False and tuples[0].dom_changed is True


async def test_without_an_injected_defect_the_ground_truth_is_unknown_unless_vouched_for(tmp_path):
    trajectory = await _roll(tmp_path)
    assert [item.defect for item in transition_tuples(trajectory)] == [None] * 4
    assert [item.defect for item in transition_tuples(trajectory, known=True)] == ["none"] * 4
    assert transition_tuples(trajectory)[1].dom_changed is True  # the app's own #save answered


def test_a_blinking_caret_is_not_a_screen_change_but_anything_wider_is(tmp_path):
    from PIL import Image, ImageDraw

    from cua._tuples import only_a_caret_differs

    def shot(name, box=None):
        image = Image.new("RGB", (320, 180), "white")
        if box:
            ImageDraw.Draw(image).rectangle(box, fill="black")
        image.save(tmp_path / name)
        return tmp_path / name

    blank, caret, word = shot("blank.png"), shot("caret.png", (100, 40, 101, 57)), shot("word.png", (100, 40, 130, 57))
    assert only_a_caret_differs(blank, caret) and only_a_caret_differs(caret, blank)
    assert only_a_caret_differs(blank, shot("same.png"))  # other bytes, same pixels
    assert not only_a_caret_differs(blank, word)
    assert not only_a_caret_differs(blank, tmp_path / "missing.png")
