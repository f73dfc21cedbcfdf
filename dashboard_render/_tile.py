"""One tile of the dashboard: the crop of a step's screenshot with its marker, badges and caption.

Colour code: green = the checker passed at this step, amber = the action changed nothing in the
DOM, red = an error or the step the rollout ended on without success; the first failure signal
(first error or no-effect action) gets a thicker border and says so. Without the verdict
(`hide_verdict`, for judges who must decide for themselves) nothing says what the checker found:
no green, no "ended" red, and the failure signal is marked whatever the outcome.
"""

from __future__ import annotations

from dataclasses import dataclass

from PIL import Image, ImageDraw

from cua import Step, Trajectory

from ._fonts import fit_line, font, wrap
from ._layout import Rect, TileLayout
from ._markers import draw_markers
from ._palette import BACKGROUND, BORDER, FAILURE, LETTERBOX, MUTED, NEUTRAL, PANEL, SUCCESS, TEXT, WARNING


@dataclass(frozen=True)
class StepStatus:
    label: str | None
    colour: tuple[int, int, int]


def step_status(step: Step, trajectory: Trajectory, is_last: bool, hide_verdict: bool = False) -> StepStatus:
    """How a step's tile is colour-coded: success green, failure red, a no-effect step amber
    (with `hide_verdict`, only errors and no-effect steps are marked)."""
    if step.checker_passed and not hide_verdict:
        return StepStatus("checker passed", SUCCESS)
    if step.error:
        return StepStatus("error", FAILURE)
    if _no_effect(step):
        return StepStatus("no DOM change", WARNING)
    if is_last and not trajectory.success and not hide_verdict:
        reason = trajectory.termination.value if trajectory.termination else "incomplete"
        return StepStatus(f"ended: {reason}", FAILURE)
    return StepStatus(None, NEUTRAL)


def first_failure_signal(trajectory: Trajectory, hide_verdict: bool = False) -> int | None:
    """Index of the first step that signals trouble (an error or an action with no DOM effect);
    None for a success, unless `hide_verdict` (then its absence would tell the outcome)."""
    if trajectory.success and not hide_verdict:
        return None
    return next((step.index for step in trajectory.steps if step.error or _no_effect(step)), None)


def _no_effect(step: Step) -> bool:
    """An action that should have changed something and did not (waiting or finishing never does)."""
    kind = step.screen_action.kind if step.screen_action else None
    return step.dom_changed is False and kind not in (None, "wait", "finished")


def compose_tile(tile: TileLayout, step: Step | None, trajectory: Trajectory, crop: Image.Image | None, signal: int | None,
                 hide_verdict: bool = False) -> Image.Image:
    """The finished tile as its own image (crop, markers, badges, caption, border), to paste at `tile.tile`.

    Self-contained so tiles can be composed in worker threads while others decode.
    """
    box = tile.tile
    local = _shifted(tile, -box.x, -box.y)
    image = Image.new("RGB", (box.width + 1, box.height + 1), BACKGROUND)
    draw = ImageDraw.Draw(image)  # opaque shapes only: alpha blending is slow; markers draw on the crop
    is_last = step is not None and step.index == len(trajectory.steps)
    status = step_status(step, trajectory, is_last, hide_verdict) if step is not None else StepStatus("initial state", NEUTRAL)
    emphasis = tile.key or (step is not None and step.index == signal)
    outline = (0, 0, box.width, box.height)
    draw.rounded_rectangle(outline, radius=6, fill=PANEL)
    area = local.image_area
    draw.rectangle((area.x, area.y, area.right - 1, area.bottom - 1), fill=LETTERBOX)
    if crop is None:
        face = font("sans", 14)
        message = "no screenshot"
        face.draw(draw, (area.x + (area.width - face.width(message)) / 2, area.y + area.height / 2 - 8), message, fill=MUTED)
    else:
        if step is not None:
            at_origin = tile.model_copy(update={"image": Rect(x=0, y=0, width=tile.image.width, height=tile.image.height)})
            draw_markers(ImageDraw.Draw(crop, "RGBA"), at_origin, step)
        image.paste(crop, (local.image.x, local.image.y))
    _badge(draw, local, "START" if step is None else f"#{step.index}", status.colour)  # NEUTRAL without a label
    if step is not None and status.label:
        tag = f"first failure signal: {status.label}" if step.index == signal else status.label
        _badge(draw, local, tag, status.colour, right=True)
    _caption(draw, local, step)
    draw.rounded_rectangle(outline, radius=6, outline=status.colour if status.label else BORDER, width=3 if emphasis else 2)
    return image


def _shifted(tile: TileLayout, dx: int, dy: int) -> TileLayout:
    def move(rect: Rect) -> Rect:
        return Rect(x=rect.x + dx, y=rect.y + dy, width=rect.width, height=rect.height)

    return tile.model_copy(update={name: move(getattr(tile, name)) for name in ("tile", "image_area", "image", "caption")})


def crop_screenshot(screenshot: Image.Image, tile: TileLayout, viewport: tuple[int, int], full_height: int | None = None) -> Image.Image:
    """The tile's crop of `screenshot`, resized to the tile. `full_height`: the screenshot's real
    height when only its top rows were decoded."""
    # Screenshots may be taken at another pixel density than the viewport: map the crop.
    fx = screenshot.width / viewport[0]
    fy = (full_height or screenshot.height) / viewport[1]
    crop = tile.crop
    source = (crop.x * fx, crop.y * fy, (crop.x + crop.width) * fx, (crop.y + crop.height) * fy)
    size = (tile.image.width, tile.image.height)
    if size == (round(source[2] - source[0]), round(source[3] - source[1])):
        return screenshot.crop(tuple(round(v) for v in source))
    return screenshot.resize(size, Image.Resampling.BICUBIC, box=source, reducing_gap=2.0)


def _badge(draw: ImageDraw.ImageDraw, tile: TileLayout, text: str, colour: tuple[int, int, int], right: bool = False) -> None:
    """A coloured label in a top corner of the tile's image: the step number (left) or its status (right)."""
    face = font("condensed-bold", 13 if tile.caption_font <= 13 else 15)
    area = tile.image_area
    room = area.width - 60 if right else area.width - 8  # leave the step number visible
    text = fit_line(face, text, room - 12)
    width = face.width(text) + 12
    x = area.right - 4 - width if right else area.x + 4
    y = area.y + 4
    draw.rounded_rectangle((x, y, x + width, y + face.line_height + 4), radius=4, fill=colour)
    face.draw(draw, (x + 6, y + 2), text, fill=(255, 255, 255))


def _caption(draw: ImageDraw.ImageDraw, tile: TileLayout, step: Step | None) -> None:
    """Line 1: the action as executed; then the start of the agent's thought."""
    box = tile.caption
    size = tile.caption_font
    head_face = font("condensed-bold", size)
    body_face = font("condensed", size)
    x, y = box.x + 6, box.y + 5
    inner = box.width - 12
    if step is None:
        head, body = "initial state", "The app as loaded, before any action."
    elif step.screen_action is not None:
        head, body = step.screen_action.describe(), step.thought or step.raw_text
    else:
        head, body = "no action", step.error or step.raw_text or "the reply did not parse"
    head_face.draw(draw, (x, y), fit_line(head_face, head, inner), fill=TEXT)
    y += head_face.line_height
    for line in wrap(body_face, body, inner, tile.caption_lines):
        body_face.draw(draw, (x, y), line, fill=MUTED)
        y += body_face.line_height
