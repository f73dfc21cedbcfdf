"""Trajectory folder → one 1920×1080 dashboard PNG (design.md §6).

Deterministic: the same trajectory gives the same bytes. Fonts come from a fixed chain of
files (see `_fonts`), nothing time-dependent is drawn, and the PNG is written with fixed
encoder settings and no metadata chunks.
"""

from __future__ import annotations

import hashlib
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
from ._png import encode_png
from ._palette import BACKGROUND, BORDER, FAILURE, LETTERBOX, MUTED, NEUTRAL, PANEL, SUCCESS, TEXT, WARNING

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
    viewport = (trajectory.viewport_width, trajectory.viewport_height)
    with ThreadPoolExecutor(max_workers=max(1, min(4, os.cpu_count() or 1))) as pool:
        pending = _start_crops(pool, folder, trajectory, layout, viewport)
        canvas = Image.new("RGB", (CANVAS_WIDTH, CANVAS_HEIGHT), BACKGROUND)
        draw = ImageDraw.Draw(canvas)  # opaque shapes only: alpha blending is slow, and only markers need it
        draw_header(draw, trajectory, header_text, layout.header)  # while the screenshots decode
        crops = {index: future.result() for index, future in pending.items()}
    signal = first_failure_signal(trajectory)
    for tile in layout.tiles:
        step = trajectory.steps[tile.index - 1] if tile.index else None
        _draw_tile(canvas, draw, tile, step, trajectory, crops.get(tile.index), signal)
    png = encode_png(canvas)
    path = write_atomic(Path(out), png) if out is not None else None
    return RenderedDashboard(png=png, layout=layout, path=path)


def _start_crops(pool, folder: Path, trajectory: Trajectory, layout: DashboardLayout, viewport: tuple[int, int]) -> dict:
    """Futures of each tile's resized crop. Every distinct screenshot is decoded once, in a worker:
    decoding and resampling dominate the render, and Pillow releases the GIL for both. Byte-identical
    files (steps that changed nothing) share one decode."""
    names = [trajectory.initial_screenshot] + [step.screenshot for step in trajectory.steps]
    tiles_by_digest: dict[str, tuple[bytes, list[TileLayout]]] = {}
    for tile in layout.tiles:
        name = names[tile.index]
        if not name or not (folder / name).is_file():
            continue
        content = (folder / name).read_bytes()
        tiles_by_digest.setdefault(hashlib.sha1(content).hexdigest(), (content, []))[1].append(tile)

    def decode_and_crop(content: bytes, tiles: list[TileLayout]) -> dict[int, Image.Image]:
        with Image.open(io.BytesIO(content)) as image:
            screenshot = image.convert("RGB")
        return {tile.index: _crop_image(screenshot, tile, viewport) for tile in tiles}

    batches = [pool.submit(decode_and_crop, content, tiles) for content, tiles in tiles_by_digest.values()]
    futures = {}
    for batch, (_, tiles) in zip(batches, tiles_by_digest.values()):
        for tile in tiles:
            futures[tile.index] = _Pick(batch, tile.index)
    return futures


@dataclass(frozen=True)
class _Pick:
    """One tile's crop out of a batch future (a future-like with `result()`)."""

    batch: object
    index: int

    def result(self) -> Image.Image:
        return self.batch.result()[self.index]


def _draw_tile(
    canvas: Image.Image,
    draw: ImageDraw.ImageDraw,
    tile: TileLayout,
    step: Step | None,
    trajectory: Trajectory,
    crop: Image.Image | None,
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

    if crop is None:
        face = font("sans", 14)
        message = "no screenshot"
        face.draw(draw, (area.x + (area.width - face.width(message)) / 2, area.y + area.height / 2 - 8), message, fill=MUTED)
    else:
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
