"""Where everything goes on the 1920×1080 canvas: the grid, each tile's crop and its scale.

The layout rule (also in the README):

1. The canvas is 1920×1080: a header on top (its height follows its wrapped text, within
   bounds) and a grid of tiles below, one tile per step plus one for the initial state, in
   reading order (left to right, top to bottom).
2. Every tile shows a crop of its screenshot around the region the step acted on. A crop is
   drawn at a scale s (canvas px per screen px) chosen so that the crop covers about
   CONTEXT_AREA screen px² (≈ 512×288, enough to see a control and its neighbours):
   s = clamp(√(image area / CONTEXT_AREA), 0.5, 1.0), raised up to 1.25 when that fills a tile
   the whole viewport could not fill otherwise. Legibility wins over context: s never goes
   below 0.5 for a point action, however many steps there are.
3. The grid's column count is the one that maximises the tile scale, then the screen area the
   crops show, among grids whose crop areas have a width/height between 0.75 and 3 (few steps → few large tiles; 20 steps → 7×3 tiles at s ≈ 0.66).
4. The last step is the key step: it stretches over the empty cells at the end of the last row,
   so it shows more of the final state. A drag whose ends do not fit at s is drawn smaller so both
   ends show; a field wider than the crop shows its start (where typing lands); `wait`,
   `finished` and the initial state show the whole viewport.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from typing import Literal

from pydantic import BaseModel, Field

from cua import Point, Step, Trajectory

CANVAS_WIDTH = 1920
CANVAS_HEIGHT = 1080
MARGIN = 12  # around the canvas edge
GUTTER = 8  # between tiles
CONTEXT_AREA = 512 * 288
MIN_SCALE = 0.5
MAX_SCALE = 1.0
MAX_MAGNIFY = 1.25
FOCUS_MARGIN = 24  # screen px kept around the acted-on region
MIN_ASPECT, MAX_ASPECT = 0.75, 3.0  # width / height of a tile's crop area

POINT_KINDS = {"click", "left_double", "right_single", "scroll", "move"}


class Rect(BaseModel):
    """An axis-aligned rectangle in integer pixels."""

    x: int
    y: int
    width: int
    height: int

    @property
    def right(self) -> int:
        return self.x + self.width

    @property
    def bottom(self) -> int:
        return self.y + self.height

    def contains(self, x: float, y: float) -> bool:
        return self.x <= x <= self.right and self.y <= y <= self.bottom


class Region(BaseModel):
    """A region of the screen (viewport px, floats)."""

    x: float
    y: float
    width: float = 0.0
    height: float = 0.0
    kind: Literal["point", "span", "box"] = Field(
        default="point", description="span: both ends must show (drag); box: a field whose start may suffice (type)."
    )


class TileLayout(BaseModel):
    index: int = Field(description="0 for the initial state, k for step k.")
    tile: Rect = Field(description="The whole tile on the canvas, caption included.")
    image_area: Rect = Field(description="The space reserved for the crop.")
    image: Rect = Field(description="Where the crop is actually drawn (centred in image_area).")
    caption: Rect
    crop: Rect = Field(description="The crop in screen (viewport) pixels.")
    scale: float = Field(description="Canvas px per screen px for this tile.")
    focus: Region | None = Field(description="What the step acted on (screen px); None for the whole view.")
    key: bool = Field(default=False, description="Enlarged key step (the last one).")
    caption_lines: int = Field(description="Thought lines the caption has room for.")
    caption_font: int

    def to_canvas(self, point: Point | tuple[float, float]) -> tuple[float, float]:
        """A screen point's position on the canvas (it may fall outside the tile if not in the crop)."""
        x, y = (point.x, point.y) if isinstance(point, Point) else point
        sx = self.image.width / self.crop.width
        sy = self.image.height / self.crop.height
        return self.image.x + (x - self.crop.x) * sx, self.image.y + (y - self.crop.y) * sy


class DashboardLayout(BaseModel):
    header: Rect
    columns: int
    rows: int
    tiles: list[TileLayout]

    def tile_for(self, index: int) -> TileLayout:
        """The tile of step `index` (0 = initial state); raises KeyError if there is none."""
        for tile in self.tiles:
            if tile.index == index:
                return tile
        raise KeyError(f"no tile for step {index} (tiles: 0..{len(self.tiles) - 1})")

    def to_canvas(self, index: int, point: Point | tuple[float, float]) -> tuple[float, float]:
        return self.tile_for(index).to_canvas(point)

    @property
    def min_action_scale(self) -> float | None:
        """The smallest scale of a tile that shows an acted-on region (None if no such tile)."""
        return min((t.scale for t in self.tiles if t.focus is not None), default=None)


@dataclass(frozen=True)
class _CaptionStyle:
    font_size: int
    thought_lines: int

    @property
    def height(self) -> int:
        line = round(self.font_size * 1.25)
        return 6 + line * (1 + self.thought_lines) + 4


def caption_style(tile_width: int, tile_height: int) -> _CaptionStyle:
    """Bigger tiles get bigger captions with more room for the thought."""
    size = 13 if tile_width < 300 else 14 if tile_width < 520 else 16
    lines = 1 if tile_height < 240 else 2 if tile_height < 420 else 3
    return _CaptionStyle(size, lines)


def focus_region(step: Step | None, previous_point: Point | None, viewport: tuple[int, int]) -> Region | None:
    """The screen region a step acted on, or None when the whole view is the point of the tile."""
    if step is None or step.screen_action is None:
        return None
    action = step.screen_action
    width, height = viewport
    if action.kind in POINT_KINDS and action.point is not None:
        return _clip(Region(x=action.point.x, y=action.point.y), width, height)
    if action.kind == "drag" and action.point is not None and action.end is not None:
        x0, x1 = sorted((action.point.x, action.end.x))
        y0, y1 = sorted((action.point.y, action.end.y))
        return _clip(Region(x=x0, y=y0, width=x1 - x0, height=y1 - y0, kind="span"), width, height)
    if action.kind in ("type", "hotkey"):
        target = step.target
        if target is not None and target.box is not None and target.tag.lower() not in ("body", "html"):
            box = target.box
            if box.width * box.height < 0.5 * width * height:  # a page-sized "field" is no focus
                return _clip(Region(x=box.x, y=box.y, width=box.width, height=box.height, kind="box"), width, height)
        if previous_point is not None:  # keys go where the last click put the focus
            return _clip(Region(x=previous_point.x, y=previous_point.y), width, height)
    return None


def _clip(region: Region, width: int, height: int) -> Region:
    x0 = min(max(region.x, 0.0), width)
    y0 = min(max(region.y, 0.0), height)
    x1 = min(max(region.x + region.width, 0.0), width)
    y1 = min(max(region.y + region.height, 0.0), height)
    return Region(x=x0, y=y0, width=x1 - x0, height=y1 - y0, kind=region.kind)


def tile_scale(area_width: int, area_height: int, viewport: tuple[int, int]) -> float:
    """The layout rule's scale for a tile whose crop area is `area_width`×`area_height` canvas px."""
    scale = min(MAX_SCALE, max(MIN_SCALE, math.sqrt(area_width * area_height / CONTEXT_AREA)))
    if scale < MAX_SCALE:
        return scale
    # A tile bigger than the context needs: magnify a little rather than letterbox a 1:1 crop.
    fill = max(area_width / viewport[0], area_height / viewport[1])
    return max(scale, min(fill, MAX_MAGNIFY))


def plan_crop(area: Rect, focus: Region | None, viewport: tuple[int, int]) -> tuple[Rect, Rect, float, Region | None]:
    """(crop in screen px, drawn image rect on canvas, scale, focus as shown) for one tile."""
    vw, vh = viewport
    whole = min(area.width / vw, area.height / vh)
    if focus is None:
        scale = whole
    else:
        scale = tile_scale(area.width, area.height, viewport)
        if focus.kind == "box":
            # A wide field is typed into at its start: keep its left/top part at full legibility
            # rather than shrinking the tile to show all of it.
            room_w = area.width / scale - 2 * FOCUS_MARGIN
            room_h = area.height / scale - 2 * FOCUS_MARGIN
            focus = focus.model_copy(update={"width": max(0.0, min(focus.width, room_w)), "height": max(0.0, min(focus.height, room_h))})
        need_w = focus.width + 2 * FOCUS_MARGIN
        need_h = focus.height + 2 * FOCUS_MARGIN
        scale = max(whole, min(scale, area.width / need_w, area.height / need_h))
    crop_w = min(vw, max(1, round(area.width / scale)))
    crop_h = min(vh, max(1, round(area.height / scale)))
    if focus is None:
        x0, y0 = 0, 0
    else:
        cx, cy = focus.x + focus.width / 2, focus.y + focus.height / 2
        x0 = round(min(max(cx - crop_w / 2, 0), vw - crop_w))
        y0 = round(min(max(cy - crop_h / 2, 0), vh - crop_h))
    drawn_w = min(area.width, round(crop_w * scale))
    drawn_h = min(area.height, round(crop_h * scale))
    image = Rect(
        x=area.x + (area.width - drawn_w) // 2, y=area.y + (area.height - drawn_h) // 2, width=drawn_w, height=drawn_h
    )
    return Rect(x=x0, y=y0, width=crop_w, height=crop_h), image, drawn_w / crop_w, focus


def _grid_cells(count: int, columns: int, top: int) -> tuple[int, int, int, int]:
    rows = math.ceil(count / columns)
    cell_w = (CANVAS_WIDTH - 2 * MARGIN + GUTTER) // columns - GUTTER
    cell_h = (CANVAS_HEIGHT - top - MARGIN + GUTTER) // rows - GUTTER
    return rows, cell_w, cell_h, (CANVAS_HEIGHT - top - MARGIN + GUTTER) - rows * (cell_h + GUTTER)


def _score(count: int, columns: int, top: int, viewport: tuple[int, int]) -> tuple[float, float]:
    rows, cell_w, cell_h, _ = _grid_cells(count, columns, top)
    style = caption_style(cell_w, cell_h)
    area_h = cell_h - style.height
    if cell_w < 40 or area_h < 24:
        return (-2.0, 0.0)
    if not MIN_ASPECT <= cell_w / area_h <= MAX_ASPECT:
        return (-1.0, cell_w * area_h)  # slivers show neither a control nor its neighbours
    scale = tile_scale(cell_w, area_h, viewport)
    shown = min(cell_w / scale, viewport[0]) * min(area_h / scale, viewport[1])
    # Legibility first (rounded so tiny differences do not beat a lot more context), then context.
    return (round(min(scale, MAX_SCALE), 2), count * shown)


def plan_layout(trajectory: Trajectory, header_height: int) -> DashboardLayout:
    """The full layout for `trajectory` under a header of `header_height` px."""
    viewport = (trajectory.viewport_width, trajectory.viewport_height)
    count = len(trajectory.steps) + 1
    top = MARGIN + header_height + GUTTER
    columns = max(range(1, count + 1), key=lambda c: (_score(count, c, top, viewport), -c))
    rows, cell_w, cell_h, slack = _grid_cells(count, columns, top)
    top += slack // 2  # centre the grid vertically in what the integer cells leave over

    tiles: list[TileLayout] = []
    previous_point: Point | None = None
    for index in range(count):
        step = trajectory.steps[index - 1] if index else None
        row, column = divmod(index, columns)
        is_last = index == count - 1 and index > 0
        span = columns - column if is_last else 1  # the key step takes the rest of the last row
        width = span * cell_w + (span - 1) * GUTTER
        tile = Rect(x=MARGIN + column * (cell_w + GUTTER), y=top + row * (cell_h + GUTTER), width=width, height=cell_h)
        style = caption_style(width if span == 1 else cell_w, cell_h)
        area = Rect(x=tile.x, y=tile.y, width=tile.width, height=tile.height - style.height)
        focus = focus_region(step, previous_point, viewport)
        crop, image, scale, focus = plan_crop(area, focus, viewport)
        tiles.append(
            TileLayout(
                index=index,
                tile=tile,
                image_area=area,
                image=image,
                caption=Rect(x=tile.x, y=area.bottom, width=tile.width, height=style.height),
                crop=crop,
                scale=round(scale, 4),
                focus=focus,
                key=is_last and span > 1,
                caption_lines=style.thought_lines,
                caption_font=style.font_size,
            )
        )
        if step is not None and step.screen_action is not None and step.screen_action.point is not None:
            action = step.screen_action
            previous_point = action.end if action.kind == "drag" and action.end else action.point
    header = Rect(x=MARGIN, y=MARGIN, width=CANVAS_WIDTH - 2 * MARGIN, height=header_height)
    return DashboardLayout(header=header, columns=columns, rows=rows, tiles=tiles)
