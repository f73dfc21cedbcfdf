"""Coordinate spaces: how a model's numbers map to viewport pixels, all in one place.

Each policy names the space its points are in; the rollout loop converts through here before
the executor acts, and the trajectory keeps both forms. Spaces (design.md §5):

- ``uitars-1.5``: absolute pixels in the *smart-resized* screenshot (Qwen2.5-VL resizes every
  image so each side is a multiple of 28 within a pixel budget; 1280×720 becomes 1288×728).
- ``uitars-1.0``: relative coordinates, 0–1000 on each axis.
- ``openai-cua``: absolute pixels of the declared display, which we make equal to the viewport.
- ``screen``: viewport pixels (identity), for offline policies.

**Points off the screen** follow one rule, the same in every space (`place_action`): a point
inside the space's extent for this screen is used as is; one at most `EDGE_TOLERANCE` (2 %) of
the extent past an edge is clamped onto the screen, with a note saying so; one further out, or
not finite, is refused (`OffScreenPoint`) and nothing is executed.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

from ._actions import Action, Point

IMAGE_FACTOR = 28
MIN_PIXELS = 100 * IMAGE_FACTOR * IMAGE_FACTOR
MAX_PIXELS = 16384 * IMAGE_FACTOR * IMAGE_FACTOR
MAX_ASPECT_RATIO = 200

# How far past an edge of the space's extent a point may lie and still be clamped onto the screen,
# as a fraction of the extent on that axis. Models often answer the edge itself (x = width, or
# 1000 in a 0–1000 space) or a few pixels past it; 2 % keeps those (≈ 26 px of a 1288 px wide
# image, 20 of 1000). A point further out is not a near miss but a misunderstanding — pixels in a
# relative space, another screen's size, a runaway number — and clicking at the clamped edge
# would act on something the model never pointed at.
EDGE_TOLERANCE = 0.02


def smart_resize(
    width: int,
    height: int,
    factor: int = IMAGE_FACTOR,
    min_pixels: int = MIN_PIXELS,
    max_pixels: int = MAX_PIXELS,
) -> tuple[int, int]:
    """The (width, height) Qwen2.5-VL resizes an image to before the model sees it.

    Each side is rounded to a multiple of `factor`; if the area leaves [min_pixels, max_pixels]
    both sides are scaled (keeping the aspect ratio) and rounded inwards/outwards to stay inside.
    Same arithmetic as `qwen_vl_utils.smart_resize` (note its argument order is height, width).

    Raises:
        ValueError: a side is not positive, or the aspect ratio exceeds 200.
    """
    if width <= 0 or height <= 0:
        raise ValueError(f"image size must be positive, got {width}×{height}")
    if max(width, height) / min(width, height) > MAX_ASPECT_RATIO:
        raise ValueError(f"aspect ratio of {width}×{height} exceeds {MAX_ASPECT_RATIO}")
    new_height = max(factor, round(height / factor) * factor)
    new_width = max(factor, round(width / factor) * factor)
    if new_height * new_width > max_pixels:
        beta = math.sqrt((height * width) / max_pixels)
        new_height = max(factor, math.floor(height / beta / factor) * factor)
        new_width = max(factor, math.floor(width / beta / factor) * factor)
    elif new_height * new_width < min_pixels:
        beta = math.sqrt(min_pixels / (height * width))
        new_height = math.ceil(height * beta / factor) * factor
        new_width = math.ceil(width * beta / factor) * factor
    return new_width, new_height


@dataclass(frozen=True)
class CoordinateSpace:
    """A mapping between a model's coordinates and viewport pixels of a `width`×`height` screen:
    `scale(width, height)` is (sx, sy) such that screen = model × (sx, sy)."""

    name: str
    scale: Callable[[int, int], tuple[float, float]]

    def to_screen(self, point: Point, width: int, height: int) -> Point:
        """The viewport pixel for a model point, clamped inside the viewport (0 to width − 1, so a
        point within the last pixel column or row is held at that pixel's edge).

        Arithmetic only: whether a model's point may be clamped at all is `place_action`'s rule,
        which the harness applies before anything is executed.
        """
        sx, sy = self.scale(width, height)
        x = min(max(point.x * sx, 0.0), width - 1.0)
        y = min(max(point.y * sy, 0.0), height - 1.0)
        return Point(x=round(x, 2), y=round(y, 2))

    def from_screen(self, point: Point, width: int, height: int) -> Point:
        """The model point a viewport pixel corresponds to (inverse of `to_screen` inside the screen)."""
        sx, sy = self.scale(width, height)
        return Point(x=round(point.x / sx, 3), y=round(point.y / sy, 3))

    def model_size(self, width: int, height: int) -> tuple[float, float]:
        """The extent of the model's space for this screen (what its x and y range over)."""
        sx, sy = self.scale(width, height)
        return width / sx, height / sy


def _smart_resized_scale(width: int, height: int) -> tuple[float, float]:
    resized_width, resized_height = smart_resize(width, height)
    return width / resized_width, height / resized_height


def _identity_scale(width: int, height: int) -> tuple[float, float]:
    return 1.0, 1.0


# The spaces of the module docstring; `openai-cua` is the identity because the rollout makes the
# declared display equal to the viewport.
_SPACES: dict[str, CoordinateSpace] = {space.name: space for space in (
    CoordinateSpace("screen", _identity_scale),
    CoordinateSpace("openai-cua", _identity_scale),
    CoordinateSpace("uitars-1.5", _smart_resized_scale),
    CoordinateSpace("uitars-1.0", lambda width, height: (width / 1000.0, height / 1000.0)),
)}


def coordinate_space(name: str) -> CoordinateSpace:
    """The space registered as `name`.

    Raises:
        KeyError: unknown name (the message lists the known ones).
    """
    try:
        return _SPACES[name]
    except KeyError:
        raise KeyError(f"unknown coordinate space {name!r}; known: {', '.join(sorted(_SPACES))}") from None


def coordinate_space_names() -> list[str]:
    return sorted(_SPACES)


class OffScreenPoint(ValueError):
    """A point that cannot be placed on the screen: not finite, or more than `EDGE_TOLERANCE` of
    its space's extent outside it. The message names the point, the space's range and the rule, in
    words a model can act on when it is asked again."""


class PlacedAction(NamedTuple):
    """What `place_action` returns: the action in viewport pixels, and a note per clamped point."""

    action: Action
    notes: list[str]


def place_action(action: Action, space: str | CoordinateSpace, width: int, height: int) -> PlacedAction:
    """`action` with its points converted from `space` to pixels of a `width`×`height` viewport.

    A point inside the space's extent (`CoordinateSpace.model_size`, e.g. 0–1288 × 0–728 for
    UI-TARS-1.5 on a 1280×720 screen) is converted as is. A point past an edge by at most
    `EDGE_TOLERANCE` of the extent on that axis is clamped onto the screen, and a note says so.
    Actions without points are returned unchanged, with no notes.

    Raises:
        OffScreenPoint: a point is not finite, or lies further outside than the tolerance.
        KeyError: `space` is not a known coordinate space.
    """
    resolved = coordinate_space(space) if isinstance(space, str) else space
    update: dict[str, Point] = {}
    notes: list[str] = []
    for field, role in (("point", "point"), ("end", "end point")):
        point = getattr(action, field)
        if point is None:
            continue
        said = f"{role} ({_number(point.x)}, {_number(point.y)})"
        outside = _outside(point, said, resolved, width, height)
        placed = update[field] = resolved.to_screen(point, width, height)
        if outside:
            notes.append(
                f"{said} was past the edge of the {outside} (within {EDGE_TOLERANCE:.0%}); "
                f"clamped to screen pixel ({_number(placed.x)}, {_number(placed.y)}) of {width}×{height}"
            )
    return PlacedAction(action.model_copy(update=update) if update else action, notes)


def _outside(point: Point, said: str, space: CoordinateSpace, width: int, height: int) -> str | None:
    """None for a point inside the space's extent; the extent, described, for one within the
    tolerance outside it.

    Raises:
        OffScreenPoint: the point is not finite or further outside (`said` names it in the message).
    """
    x, y = point.x, point.y
    # Points are validated finite, but a model_copy(update=…) skips validation: check anyway.
    if not (math.isfinite(x) and math.isfinite(y)):
        raise OffScreenPoint(f"{said} is not a finite number")
    extent_x, extent_y = space.model_size(width, height)
    if 0 <= x < extent_x and 0 <= y < extent_y:
        return None
    extent = f"0–{_number(extent_x)} × 0–{_number(extent_y)}"
    margin_x, margin_y = EDGE_TOLERANCE * extent_x, EDGE_TOLERANCE * extent_y
    if not (-margin_x <= x <= extent_x + margin_x and -margin_y <= y <= extent_y + margin_y):
        raise OffScreenPoint(
            f"{said} is off the screen: {space.name} coordinates run {extent} on this {width}×{height} screen "
            f"(a point up to {EDGE_TOLERANCE:.0%} past an edge is moved onto it, one further out is refused)"
        )
    return f"{space.name} range {extent}"


def _number(value: float) -> str:
    """A coordinate as a person reads it: 1290, 395.6, 1e+308."""
    return f"{value:.6g}"


def action_to_screen(action: Action, space: str | CoordinateSpace, width: int, height: int) -> Action:
    """`place_action` without its notes: `action` in viewport pixels; raises as `place_action` does."""
    return place_action(action, space, width, height).action


def action_from_screen(action: Action, space: str | CoordinateSpace, width: int, height: int) -> Action:
    """`action` with its points converted from viewport pixels to `space` (e.g. to script a model)."""
    resolved = coordinate_space(space) if isinstance(space, str) else space
    update = {field: resolved.from_screen(point, width, height)
              for field, point in (("point", action.point), ("end", action.end)) if point is not None}
    return action.model_copy(update=update) if update else action
