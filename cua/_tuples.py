"""A trajectory as transition tuples (GTArena's unit): the state before, the action, the state after.

Each executed step of a trajectory (its `finished` answer aside: it does not act on the page)
becomes one `TransitionTuple` — the screenshots before and after (paths relative to the
trajectory folder), the action in screen pixels, the element under the pointer (the focused one
for keys), whether the DOM and the screen changed — and, when it is known, the ground truth:
which GUI defect the step ran into, or "none".

**The labelling rule.** A defect injected at serve time (`perturb`) is bound to one element of
the app, which carries `INJECTED_ATTRIBUTE="defect:<type>"`; the harness records that value for
the element a step acted on (`ElementInfo.injected`, taken before the action). A tuple is
defective, of that type, exactly when its step acted on the bound element or inside it — a click
on it, keys typed while it had the focus, a drag or scroll that started on it. Every other tuple of
a rollout on a defect-injected app is labelled "none": the defect is bound to one element, the rest
of the app is the defect-free version. The ground truth is unknown (None) for rollouts on apps
nobody injected a defect into, unless the caller vouches for them (`known=True`: the defect-free
counterpart of a defect set).

**A blinking caret is not a change.** Chromium blinks the text caret of a focused field every half
second, so the screenshots around a step on a field (select-all in an empty input) differ or not by
when they were taken. With the trajectory's folder at hand (`write_tuples`), a step on an input or
text area whose screenshots differ only inside a caret-sized box (`CARET_MAX_WIDTH_PX` wide, at
most `CARET_MAX_HEIGHT_PX` tall) has `screen_changed` false — so a dataset's tuples repeat.
"""

from __future__ import annotations

import json
from pathlib import Path
from PIL import Image, ImageChops
from pydantic import BaseModel, Field

from llm import first_problem

from ._actions import Action
from ._defect_types import DEFECT_TYPES
from ._trajectory import ElementInfo, Trajectory, write_atomic

TUPLES_FILE = "tuples.jsonl"

CARET_MAX_WIDTH_PX = 3
CARET_MAX_HEIGHT_PX = 64
_CARET_TAGS = frozenset({"input", "textarea"})

DEFECT_PREFIX = "defect:"
"""How a defect transform's name begins (`defect:<type>@…`), and the value of `INJECTED_ATTRIBUTE`
on the element a defect is bound to (`defect:<type>`)."""

NO_DEFECT = "none"
"""The ground truth of a tuple known to be defect-free."""


class TransitionTuple(BaseModel):
    """One step as (state before, action, state after), with its ground truth when known."""

    app_id: str
    task_id: str
    step: int = Field(description="The step's 1-based index in its trajectory.")
    before: str | None = Field(description="Screenshot before the action, relative to the trajectory folder.")
    after: str | None = Field(description="Screenshot after the action, relative to the trajectory folder.")
    action: Action = Field(description="The action in screen pixels of the viewport, as executed.")
    action_text: str = Field(description="The action in words, e.g. `click(640,360)`.")
    element: ElementInfo | None = Field(default=None, description="The element under the pointer (the focused one for "
                                        "keys) when the step acted.")
    dom_changed: bool | None = None
    screen_changed: bool | None = None
    error: str | None = Field(default=None, description="Why the action could not be carried out, if it could not.")
    defect: str | None = Field(default=None, description="Ground truth: a defect type of `DEFECT_TYPES`, 'none', or "
                               "None when unknown (see the labelling rule in `cua._tuples`).")
    transform: str | None = Field(default=None, description="The serve-time change the app was shown with.")
    viewport_width: int
    viewport_height: int

    @property
    def defective(self) -> bool | None:
        """True/False when the ground truth is known, else None."""
        return None if self.defect is None else self.defect != NO_DEFECT


def is_defect_transform(name: str | None) -> bool:
    """Whether a trajectory's `transform` is an injected defect (not a variation, not the app as it is)."""
    return bool(name) and name.startswith(DEFECT_PREFIX)


def defect_of(element: ElementInfo | None) -> str | None:
    """The defect type bound to the acted-on element (its `injected` marker), or None."""
    marker = element.injected if element is not None else None
    if marker and marker.startswith(DEFECT_PREFIX) and marker[len(DEFECT_PREFIX):] in DEFECT_TYPES:
        return marker[len(DEFECT_PREFIX):]
    return None


def transition_tuples(trajectory: Trajectory, *, known: bool | None = None,
                      folder: Path | str | None = None) -> list[TransitionTuple]:
    """The trajectory's tuples in step order, labelled by the rule of this module.

    `known`: whether the ground truth is known; None decides by the trajectory (a defect transform).
    `folder`: the trajectory's folder; with it, a caret's blink is not counted as a screen change.
    """
    known = is_defect_transform(trajectory.transform) if known is None else known
    tuples = []
    before = trajectory.initial_screenshot
    for step in trajectory.steps:
        action = step.screen_action
        if action is None or action.kind == "finished":
            continue  # an unusable reply acted on nothing; `finished` answers, it does not act on the page
        truth = (defect_of(step.target) or NO_DEFECT) if known else None
        screen_changed = step.screen_changed
        if (screen_changed and folder is not None and before and step.screenshot and step.target is not None
                and step.target.tag in _CARET_TAGS and only_a_caret_differs(Path(folder) / before, Path(folder) / step.screenshot)):
            screen_changed = False
        tuples.append(TransitionTuple(
            app_id=trajectory.app_id, task_id=trajectory.task_id, step=step.index, before=before,
            after=step.screenshot, action=action, action_text=action.describe(), element=step.target,
            dom_changed=step.dom_changed, screen_changed=screen_changed, error=step.error, defect=truth,
            transform=trajectory.transform, viewport_width=trajectory.viewport_width,
            viewport_height=trajectory.viewport_height))
        before = step.screenshot or before
    return tuples


def only_a_caret_differs(before: Path, after: Path) -> bool:
    """Whether two screenshots differ at most inside one caret-sized box (False if either cannot be read)."""
    try:
        with Image.open(before) as first, Image.open(after) as second:
            if first.size != second.size:
                return False
            box = ImageChops.difference(first.convert("RGB"), second.convert("RGB")).getbbox()
    except (OSError, ValueError):
        return False
    return box is None or (box[2] - box[0] <= CARET_MAX_WIDTH_PX and box[3] - box[1] <= CARET_MAX_HEIGHT_PX)


def write_tuples(trajectory: Trajectory, folder: Path | str, *, known: bool | None = None) -> Path:
    """Write the trajectory's tuples as `tuples.jsonl` into its folder (atomically; one JSON object a line)."""
    lines = [item.model_dump_json(exclude_none=False)
             for item in transition_tuples(trajectory, known=known, folder=folder)]
    return write_atomic(Path(folder) / TUPLES_FILE, "".join(line + "\n" for line in lines).encode("utf-8"))


def read_tuples(folder: Path | str) -> list[TransitionTuple]:
    """The tuples of a trajectory folder.

    Raises:
        FileNotFoundError: the folder has no `tuples.jsonl`.
        ValueError: a line is not a tuple, naming the file and the line.
    """
    path = Path(folder) / TUPLES_FILE
    if not path.is_file():
        raise FileNotFoundError(f"no {TUPLES_FILE} in '{folder}'")
    found = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            found.append(TransitionTuple.model_validate(json.loads(line)))
        except ValueError as exc:
            raise ValueError(f"{path}:{number}: not a transition tuple: {first_problem(exc)}") from None
    return found
