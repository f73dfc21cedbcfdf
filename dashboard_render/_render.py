"""Trajectory folder → one 1920×1080 dashboard PNG (design.md §6).

Deterministic: the same trajectory gives the same bytes. Fonts come from a fixed chain of
files (see `_fonts`), nothing time-dependent is drawn, and the PNG is written with fixed
encoder settings and no metadata chunks (see `_png`).

Decoding the step screenshots dominates the cost, so each distinct screenshot is decoded in a
worker thread, which then composes the tiles that use it (Pillow releases the GIL while
inflating and resampling); the main thread draws the header meanwhile and pastes the tiles.
"""

from __future__ import annotations

import hashlib
import io
import math
import os
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from PIL import Image, ImageDraw

from cua import Trajectory, write_atomic

from ._header import draw_header, plan_header
from ._layout import CANVAS_HEIGHT, CANVAS_WIDTH, DashboardLayout, TileLayout, plan_layout
from ._palette import BACKGROUND
from ._png import encode_png
from ._tile import compose_tile, crop_screenshot, first_failure_signal

DASHBOARD_FILE = "dashboard.png"


@dataclass(frozen=True)
class RenderedDashboard:
    """A rendered dashboard: its PNG bytes, the layout that placed every tile, where it was written."""

    png: bytes
    layout: DashboardLayout
    path: Path | None = None


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


def draw_dashboard_file(trajectory_dir: Path | str, out: Path | str) -> None:
    """`render_dashboard(trajectory_dir, out)` returning nothing: what a process pool runs (the
    rendered image stays in the worker; only the file is wanted)."""
    render_dashboard(trajectory_dir, out)


def render_trajectory(
    trajectory: Trajectory, folder: Path | str, out: Path | str | None = None, *, hide_verdict: bool = False
) -> RenderedDashboard:
    """Render an already loaded trajectory whose screenshots live under `folder`.

    `hide_verdict` draws it without what the checker decided (no SUCCESS/FAILURE badge, no
    termination reason, no "checker passed" green): the dashboard a judge of success is shown.
    """
    folder = Path(folder)
    header_text = plan_header(trajectory)
    layout = plan_layout(trajectory, header_text.height)
    signal = first_failure_signal(trajectory, hide_verdict)
    canvas = Image.new("RGB", (CANVAS_WIDTH, CANVAS_HEIGHT), BACKGROUND)
    with ThreadPoolExecutor(max_workers=max(1, min(4, os.cpu_count() or 1))) as pool:
        batches = _start_tiles(pool, folder, trajectory, layout, signal, hide_verdict)
        draw_header(ImageDraw.Draw(canvas), trajectory, header_text, layout.header, hide_verdict)
        for batch in batches:
            for index, tile_image in batch.result().items():
                tile = layout.tiles[index]
                canvas.paste(tile_image, (tile.tile.x, tile.tile.y))
    png = encode_png(canvas)
    path = write_atomic(Path(out), png) if out is not None else None
    return RenderedDashboard(png=png, layout=layout, path=path)


def _start_tiles(
    pool: ThreadPoolExecutor, folder: Path, trajectory: Trajectory, layout: DashboardLayout, signal: int | None,
    hide_verdict: bool = False,
) -> list[Future]:
    """One job per distinct screenshot (byte-identical files of no-change steps decode once),
    plus one for tiles whose screenshot is missing; each returns {tile index: tile image}."""
    viewport = (trajectory.viewport_width, trajectory.viewport_height)
    names = [trajectory.initial_screenshot] + [step.screenshot for step in trajectory.steps]
    groups: dict[str, tuple[bytes | None, list[TileLayout]]] = {}
    for tile in layout.tiles:
        name = names[tile.index]
        content = (folder / name).read_bytes() if name and (folder / name).is_file() else None
        key = hashlib.sha1(content).hexdigest() if content is not None else "missing"
        groups.setdefault(key, (content, []))[1].append(tile)

    def compose(content: bytes | None, tiles: list[TileLayout]) -> dict[int, Image.Image]:
        screenshot, full_height = None, None
        if content is not None:
            bottom = max(tile.crop.y + tile.crop.height for tile in tiles) / viewport[1]
            screenshot, full_height = _decode_top(content, bottom)
        composed = {}
        for tile in tiles:
            step = trajectory.steps[tile.index - 1] if tile.index else None
            crop = crop_screenshot(screenshot, tile, viewport, full_height) if screenshot is not None else None
            composed[tile.index] = compose_tile(tile, step, trajectory, crop, signal, hide_verdict)
        return composed

    return [pool.submit(compose, content, tiles) for content, tiles in groups.values()]


FILTER_MARGIN_ROWS = 24
"""Rows decoded below the lowest crop: what a bicubic resize reads past a box's edge (2 source
pixels per unit of downscale, and crops are shrunk at most ~5×), so the pixels are exactly those
of a full decode."""


def _decode_top(content: bytes, fraction: float) -> tuple[Image.Image, int]:
    """(the screenshot's top `fraction` decoded as RGB, its full height). The rows below the
    lowest crop are never read: PNG rows are stored top to bottom, so stopping early gives the
    same pixels as decoding all and cropping. Any other kind of file is decoded whole."""
    with Image.open(io.BytesIO(content)) as image:
        width, height = image.size
        rows = min(height, math.ceil(fraction * height) + FILTER_MARGIN_ROWS)
        tiles = image.tile
        if image.format == "PNG" and len(tiles) == 1 and tiles[0].codec_name == "zip" and rows < height \
                and not image.info.get("interlace"):
            # Pillow has no public "decode the first N rows": narrowing the one decoder tile and
            # the size it fills is that, and the decoder stops once those rows are filled.
            image.tile = [tiles[0]._replace(extents=(0, 0, width, rows))]
            image._size = (width, rows)
        return image.convert("RGB"), height
