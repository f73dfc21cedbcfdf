"""Action markers drawn over a tile's crop: where the agent clicked, dragged, scrolled, typed.

Markers use one loud colour (magenta, rare in app UIs) with a white halo so they stay visible
on light and dark apps alike; success and failure colours are kept for borders and captions.
"""

from __future__ import annotations

import math

from PIL import ImageDraw

from cua import Step

from ._fonts import fit_line, font
from ._layout import TileLayout

MARKER = (236, 72, 153)
HALO = (255, 255, 255)
LABEL_BG = (17, 24, 39, 225)
LABEL_TEXT = (255, 255, 255)


def draw_markers(draw: ImageDraw.ImageDraw, tile: TileLayout, step: Step) -> None:
    """Draw the marker of `step`'s screen action inside `tile` (nothing for steps without one)."""
    action = step.screen_action
    if action is None:
        return
    radius = max(10, min(16, round(tile.image.width / 24)))
    match action.kind:
        case "click" | "left_double" | "right_single":
            x, y = tile.to_canvas(action.point)
            _numbered_circle(draw, x, y, radius, str(step.index))
            if action.kind == "left_double":
                _ring(draw, x, y, radius + 6, 3)
            elif action.kind == "right_single":
                _pill(draw, x + radius + 4, y - radius, "right-click", tile, size=12)
        case "move":
            x, y = tile.to_canvas(action.point)
            _ring(draw, x, y, radius, 3)
            _pill(draw, x + radius + 4, y - radius, f"hover #{step.index}", tile, size=12)
        case "drag":
            x0, y0 = tile.to_canvas(action.point)
            x1, y1 = tile.to_canvas(action.end)
            _arrow(draw, (x0, y0), (x1, y1), width=4)
            _numbered_circle(draw, x0, y0, radius, str(step.index))
        case "scroll":
            x, y = tile.to_canvas(action.point)
            dx, dy = {"up": (0, -1), "down": (0, 1), "left": (-1, 0), "right": (1, 0)}[action.direction]
            length = max(36, min(80, tile.image.height // 3))
            _arrow(draw, (x, y), (x + dx * length, y + dy * length), width=5)
            _numbered_circle(draw, x, y, radius, str(step.index))
        case "type":
            box = _target_rect(tile, step)
            if box is not None:
                draw.rectangle(box, outline=HALO, width=4)
                draw.rectangle(box, outline=MARKER, width=2)
            typed = (action.text or "").replace("\n", "⏎")
            anchor = (box[0], box[3] + 4) if box is not None else (tile.image.x + 8, tile.image.bottom - 30)
            _pill(draw, anchor[0], anchor[1], f"⌨ {typed}", tile, size=15)
        case "hotkey":
            chord = " + ".join(key.capitalize() if len(key) > 1 else key.upper() for key in action.keys)
            box = _target_rect(tile, step)
            if box is not None:
                draw.rectangle(box, outline=MARKER, width=2)
            _pill(draw, tile.image.x + 8, tile.image.y + 8, f"keys: {chord}", tile, size=16, centred=True)
        case "wait" | "finished":
            text = f"finished: {action.text}" if action.kind == "finished" and action.text else action.kind
            _pill(draw, tile.image.x + 8, tile.image.y + 8, text, tile, size=16, centred=True)


def _target_rect(tile: TileLayout, step: Step) -> tuple[float, float, float, float] | None:
    target = step.target
    if target is None or target.box is None or tile.focus is None:
        return None
    x0, y0 = tile.to_canvas((target.box.x, target.box.y))
    x1, y1 = tile.to_canvas((target.box.x + target.box.width, target.box.y + target.box.height))
    # Keep the outline inside the drawn crop so it never spills over a neighbouring tile.
    image = tile.image
    x0, x1 = max(x0 - 3, image.x), min(x1 + 3, image.right - 1)
    y0, y1 = max(y0 - 3, image.y), min(y1 + 3, image.bottom - 1)
    if x1 <= x0 or y1 <= y0:
        return None
    return (x0, y0, x1, y1)


def _numbered_circle(draw: ImageDraw.ImageDraw, x: float, y: float, radius: int, label: str) -> None:
    """A hollow ring on the point (the target stays readable) with the step number on a tab."""
    draw.ellipse((x - radius - 2, y - radius - 2, x + radius + 2, y + radius + 2), outline=HALO, width=7)
    draw.ellipse((x - radius, y - radius, x + radius, y + radius), outline=MARKER, width=3)
    draw.ellipse((x - 3, y - 3, x + 3, y + 3), fill=MARKER, outline=HALO)
    face = font("bold", max(11, radius - 1))
    width = face.width(label) + 8
    height = face.line_height + 2
    left = x + radius * 0.55
    top = y - radius * 0.55 - height
    draw.rounded_rectangle((left, top, left + width, top + height), radius=height // 2, fill=MARKER, outline=HALO, width=2)
    face.draw(draw, (left + 4, top + 1), label, fill=LABEL_TEXT)


def _ring(draw: ImageDraw.ImageDraw, x: float, y: float, radius: int, width: int) -> None:
    draw.ellipse((x - radius, y - radius, x + radius, y + radius), outline=HALO, width=width + 2)
    draw.ellipse((x - radius + 1, y - radius + 1, x + radius - 1, y + radius - 1), outline=MARKER, width=width)


def _arrow(draw: ImageDraw.ImageDraw, start: tuple[float, float], end: tuple[float, float], width: int) -> None:
    angle = math.atan2(end[1] - start[1], end[0] - start[0])
    head = 14 + width
    head_points = [end, *((end[0] - head * math.cos(angle + turn), end[1] - head * math.sin(angle + turn))
                          for turn in (-0.45, 0.45))]
    shaft_end = (end[0] - head * 0.7 * math.cos(angle), end[1] - head * 0.7 * math.sin(angle))
    draw.line([start, shaft_end], fill=HALO, width=width + 4)
    draw.polygon(head_points, fill=HALO, outline=HALO, width=3)
    draw.line([start, shaft_end], fill=MARKER, width=width)
    draw.polygon(head_points, fill=MARKER)


def _pill(
    draw: ImageDraw.ImageDraw, x: float, y: float, text: str, tile: TileLayout, size: int, centred: bool = False
) -> None:
    """A dark label with white text, kept inside the tile's drawn crop."""
    face = font("condensed-bold", size)
    image = tile.image
    pad = 5
    text = fit_line(face, text, image.width - 2 * pad - 16)
    width = face.width(text) + 2 * pad
    height = face.line_height + 4
    if centred:
        x = image.x + (image.width - width) / 2
    x = min(max(x, image.x + 4), image.right - width - 4)
    y = min(max(y, image.y + 4), image.bottom - height - 4)
    draw.rounded_rectangle((x, y, x + width, y + height), radius=5, fill=LABEL_BG, outline=MARKER, width=1)
    face.draw(draw, (x + pad, y + 2), text, fill=LABEL_TEXT)
