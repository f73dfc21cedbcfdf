"""The dashboard header: result, termination reason, task, expected outcome, step count.

All text is wrapped to the header's width with a cap on lines (ending in an ellipsis), so a
long task never overflows; the header's height follows the wrapped text within bounds.
"""

from __future__ import annotations

from dataclasses import dataclass

from PIL import ImageDraw

from cua import Trajectory

from ._fonts import fit_line, font, wrap
from ._layout import CANVAS_WIDTH, MARGIN, Rect
from ._palette import BORDER, FAILURE, MUTED, PANEL, SUCCESS, TEXT

BADGE_WIDTH = 250
PAD = 12
MIN_HEIGHT = 100
TASK_LINES = 3
EXPECTED_LINES = 2
LEGEND_WITHOUT_VERDICT = ("Markers: ring + number = click (double ring: double-click)   ➜ drag / scroll   "
                          "⌨ typed text   keys: hotkey   amber = no DOM change, red = error")
LEGEND = LEGEND_WITHOUT_VERDICT + " or final failure, green = checker passed"
TEXT_WIDTH = CANVAS_WIDTH - 2 * MARGIN - BADGE_WIDTH - 3 * PAD  # beside the badge


@dataclass(frozen=True)
class HeaderText:
    task: list[str]
    expected: list[str]
    meta: str
    height: int


def plan_header(trajectory: Trajectory) -> HeaderText:
    """Wrap the header's text and compute its height."""
    task = wrap(font("bold", 22), f"Task: {trajectory.task}", TEXT_WIDTH, TASK_LINES)
    expected_text = trajectory.expected_outcome.strip() or "(not given)"
    expected = wrap(font("sans", 17), f"Expected: {expected_text}", TEXT_WIDTH, EXPECTED_LINES)
    who = trajectory.policy + (f" / {trajectory.model}" if trajectory.model else "") + (" (offline)" if trajectory.offline else "")
    meta = f"app {trajectory.app_id}  ·  task {trajectory.task_id}  ·  agent {who}  ·  viewport {trajectory.viewport_width}×{trajectory.viewport_height}"
    height = PAD + len(task) * font("bold", 22).line_height + 4 + len(expected) * font("sans", 17).line_height
    height += 6 + 2 * font("sans", 14).line_height + PAD
    return HeaderText(task=task, expected=expected, meta=meta, height=max(MIN_HEIGHT, height))


def result_label(trajectory: Trajectory, hide_verdict: bool = False) -> tuple[str, tuple[int, int, int]]:
    if hide_verdict:
        return "ATTEMPT", MUTED
    if trajectory.success:
        return "SUCCESS", SUCCESS
    if trajectory.termination is None:
        return "INCOMPLETE", FAILURE
    return "FAILURE", FAILURE


def draw_header(draw: ImageDraw.ImageDraw, trajectory: Trajectory, text: HeaderText, box: Rect, hide_verdict: bool = False) -> None:
    """The header; with `hide_verdict` the badge says neither the result nor how the rollout ended."""
    draw.rounded_rectangle((box.x, box.y, box.right, box.bottom), radius=10, fill=PANEL, outline=BORDER)
    label, colour = result_label(trajectory, hide_verdict)
    badge = (box.x + PAD, box.y + PAD, box.x + PAD + BADGE_WIDTH, box.bottom - PAD)
    draw.rounded_rectangle(badge, radius=8, fill=colour)
    big = font("bold", 30)
    big.draw(draw, (badge[0] + 14, badge[1] + 8), label, fill=(255, 255, 255))
    small = font("condensed-bold", 17)
    reason = trajectory.termination.value if trajectory.termination else "no termination recorded"
    steps = len(trajectory.steps)
    lines = [] if hide_verdict else [f"ended: {reason}"]
    lines += [f"{steps} step{'s' if steps != 1 else ''}" + (f"  ·  {trajectory.duration_s:.1f} s" if trajectory.duration_s else "")]
    y = badge[1] + 8 + big.line_height + 2
    for line in lines:
        if y + small.line_height > badge[3]:
            break
        small.draw(draw, (badge[0] + 14, y), fit_line(small, line, BADGE_WIDTH - 28), fill=(255, 255, 255))
        y += small.line_height

    x = badge[2] + 2 * PAD
    y = box.y + PAD
    for face, lines, gap in ((font("bold", 22), text.task, 4), (font("sans", 17), text.expected, 6)):
        for line in lines:
            face.draw(draw, (x, y), line, fill=TEXT)
            y += face.line_height
        y += gap
    meta = font("sans", 14)
    meta.draw(draw, (x, y), fit_line(meta, text.meta, TEXT_WIDTH), fill=MUTED)
    y += meta.line_height
    meta.draw(draw, (x, y), fit_line(meta, LEGEND_WITHOUT_VERDICT if hide_verdict else LEGEND, TEXT_WIDTH), fill=MUTED)
