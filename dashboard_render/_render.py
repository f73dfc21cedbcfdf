"""Trajectory folder → one 1920×1080 dashboard PNG (design.md §6).

Deterministic: the same trajectory gives the same bytes. Fonts come from a fixed chain of
files (see `_fonts`), nothing time-dependent is drawn, and the PNG is written with fixed
encoder settings and no metadata chunks.
"""

from __future__ import annotations

import io
import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from PIL import Image, ImageDraw

from cua import Step, Trajectory, write_atomic

from ._fonts import fit_line, font, wrap
from ._header import draw_header, plan_header
from ._layout import CANVAS_HEIGHT, CANVAS_WIDTH, DashboardLayout, Rect, TileLayout, plan_layout
from ._markers import draw_markers
from ._palette import BACKGROUND, BORDER, FAILURE, LETTERBOX, MUTED, NEUTRAL, PANEL, SUCCESS, TEXT, WARNING

PNG_SETTINGS = {"compress_level": 1, "optimize": False}  # fixed: speed over size, same bytes every time
DASHBOARD_FILE = "dashboard.png"


@dataclass(frozen=True)
class RenderedDashboard:
    """A rendered dashboard: its PNG bytes, the layout that placed every tile, where it was written."""

    png: bytes
    layout: DashboardLayout
    path: Path | None = None


@dataclass(frozen=True)
class StepStatus:
    label: str | None
    colour: tuple[int, int, int]


def step_status(step: Step, trajectory: Trajectory, is_last: bool) -> StepStatus:
    """How a step's tile is colour-coded: success green, failure red, a no-effect step amber."""
    if step.checker_passed:
        return StepStatus("checker passed", SUCCESS)
    if step.error:
        return StepStatus("error", FAILURE)
    if step.dom_changed is False:
        return StepStatus("no DOM change", WARNING)
    if is_last and not trajectory.success:
        reason = trajectory.termination.value if trajectory.termination else "incomplete"
        return StepStatus(f"ended: {reason}", FAILURE)
    return StepStatus(None, NEUTRAL)


def first_failure_signal(trajectory: Trajectory) -> int | None:
    """Index of the first step that signals trouble (an error or an action with no DOM effect)."""
    if trajectory.success:
        return None
    for step in trajectory.steps:
        if step.error or step.dom_changed is False:
            return step.index
    return None


def plan_dashboard(trajectory: Trajectory) -> DashboardLayout:
    """The layout `render_trajectory` would use, without drawing anything (cheap)."""
    return plan_layout(trajectory, plan_header(trajectory).height)


def render_dashboard(trajectory_dir: Path | str, out: Path | str | None = None) -> RenderedDashboard:
    """Render the trajectory in `trajectory_dir`; write the PNG to `out` when given.

    Raises FileNotFoundError / ValueError (from `Trajectory.load`) naming the folder at fault.
    Missing screenshots are drawn as labelled placeholders rather than failing the render.
    """
    folder = Path(trajectory_dir)
    return render_trajectory(Trajectory.load(folder), folder, out)


def render_trajectory(trajectory: Trajectory, folder: Path | str, out: Path | str | None = None) -> RenderedDashboard:
    """Render an already loaded trajectory whose screenshots live under `folder`."""
    folder = Path(folder)
    header_text = plan_header(trajectory)
    layout = plan_layout(trajectory, header_text.height)
    images = _load_screenshots(folder, trajectory)

    canvas = Image.new("RGB", (CANVAS_WIDTH, CANVAS_HEIGHT), BACKGROUND)
    draw = ImageDraw.Draw(canvas, "RGBA")
    draw_header(draw, trajectory, header_text, layout.header)
    signal = first_failure_signal(trajectory)
    viewport = (trajectory.viewport_width, trajectory.viewport_height)
    for tile in layout.tiles:
        step = trajectory.steps[tile.index - 1] if tile.index else None
        name = trajectory.initial_screenshot if step is None else step.screenshot
        _draw_tile(canvas, draw, tile, step, trajectory, images.get(name) if name else None, viewport, signal)

    buffer = io.BytesIO()
    canvas.save(buffer, format="PNG", **PNG_SETTINGS)
    png = buffer.getvalue()
    path = write_atomic(Path(out), png) if out is not None else None
    return RenderedDashboard(png=png, layout=layout, path=path)


def _load_screenshots(folder: Path, trajectory: Trajectory) -> dict[str, Image.Image]:
    names = [trajectory.initial_screenshot] + [step.screenshot for step in trajectory.steps]
    unique = sorted({name for name in names if name and (folder / name).is_file()})

    def load(name: str) -> Image.Image:
        with Image.open(folder / name) as image:
            return image.convert("RGB")

    # Decoding dominates the render; Pillow releases the GIL while inflating, so threads help.
    workers = max(1, min(4, os.cpu_count() or 1, len(unique)))
    with ThreadPoolExecutor(max_workers=workers) as pool:
        return dict(zip(unique, pool.map(load, unique)))


def _draw_tile(
    canvas: Image.Image,
    draw: ImageDraw.ImageDraw,
    tile: TileLayout,
    step: Step | None,
    trajectory: Trajectory,
    screenshot: Image.Image | None,
    viewport: tuple[int, int],
    signal: int | None,
) -> None:
    is_last = step is not None and step.index == len(trajectory.steps)
    status = step_status(step, trajectory, is_last) if step is not None else StepStatus("initial state", NEUTRAL)
    emphasis = tile.key or (step is not None and step.index == signal)
    box = tile.tile
    border = status.colour if status.label else BORDER
    draw.rounded_rectangle((box.x, box.y, box.right, box.bottom), radius=6, fill=PANEL)
    area = tile.image_area
    draw.rectangle((area.x, area.y, area.right - 1, area.bottom - 1), fill=LETTERBOX)

    if screenshot is None:
        face = font("sans", 14)
        message = "no screenshot"
        face.draw(draw, (area.x + (area.width - face.width(message)) / 2, area.y + area.height / 2 - 8), message, fill=MUTED)
    else:
        crop = _crop_image(screenshot, tile, viewport)
        if step is not None:
            local = tile.model_copy(update={"image": Rect(x=0, y=0, width=tile.image.width, height=tile.image.height)})
            draw_markers(ImageDraw.Draw(crop, "RGBA"), local, step)
        canvas.paste(crop, (tile.image.x, tile.image.y))

    _badge(draw, tile, "START" if step is None else f"#{step.index}", status.colour if status.label else NEUTRAL)
    if step is not None and status.label:
        tag = f"first failure signal: {status.label}" if step.index == signal else status.label
        _badge(draw, tile, tag, status.colour, right=True)
    _caption(draw, tile, step)
    width = 3 if emphasis else 2
    draw.rounded_rectangle((box.x, box.y, box.right, box.bottom), radius=6, outline=border, width=width)


def _crop_image(screenshot: Image.Image, tile: TileLayout, viewport: tuple[int, int]) -> Image.Image:
    # Screenshots may be taken at another pixel density than the viewport: map the crop.
    fx = screenshot.width / viewport[0]
    fy = screenshot.height / viewport[1]
    crop = tile.crop
    source = (crop.x * fx, crop.y * fy, (crop.x + crop.width) * fx, (crop.y + crop.height) * fy)
    size = (tile.image.width, tile.image.height)
    if size == (round(source[2] - source[0]), round(source[3] - source[1])):
        return screenshot.crop(tuple(round(v) for v in source))
    return screenshot.resize(size, Image.Resampling.LANCZOS, box=source, reducing_gap=2.0)


def _badge(draw: ImageDraw.ImageDraw, tile: TileLayout, text: str, colour: tuple[int, int, int], right: bool = False) -> None:
    """A coloured label in a top corner of the tile's image: the step number (left) or its status (right)."""
    face = font("condensed-bold", 13 if tile.caption_font <= 13 else 15)
    area = tile.image_area
    room = area.width - 60 if right else area.width - 8  # leave the step number visible
    text = fit_line(face, text, room - 12)
    width = face.width(text) + 12
    x = area.right - 4 - width if right else area.x + 4
    y = area.y + 4
    draw.rounded_rectangle((x, y, x + width, y + face.line_height + 4), radius=4, fill=colour + (235,))
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
