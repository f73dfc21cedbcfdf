"""Coordinate spaces: how a model's numbers map to viewport pixels, all in one place.

Each policy names the space its points are in; the rollout loop converts through here before
the executor acts, and the trajectory keeps both forms. Spaces (design.md §5):

- ``uitars-1.5``: absolute pixels in the *smart-resized* screenshot (Qwen2.5-VL resizes every
  image so each side is a multiple of 28 within a pixel budget; 1280×720 becomes 1288×728).
- ``uitars-1.0``: relative coordinates, 0–1000 on each axis.
- ``openai-cua``: absolute pixels of the declared display, which we make equal to the viewport.
- ``screen``: viewport pixels (identity), for offline policies.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod

from ._actions import Action, Point

IMAGE_FACTOR = 28
MIN_PIXELS = 100 * IMAGE_FACTOR * IMAGE_FACTOR
MAX_PIXELS = 16384 * IMAGE_FACTOR * IMAGE_FACTOR
MAX_ASPECT_RATIO = 200


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


class CoordinateSpace(ABC):
    """A mapping between a model's coordinates and viewport pixels of a `width`×`height` screen."""

    name: str

    @abstractmethod
    def scale(self, width: int, height: int) -> tuple[float, float]:
        """(sx, sy) such that screen = model × (sx, sy)."""

    def to_screen(self, point: Point, width: int, height: int) -> Point:
        """The viewport pixel for a model point, clamped inside the viewport."""
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


class ScreenSpace(CoordinateSpace):
    name = "screen"

    def scale(self, width: int, height: int) -> tuple[float, float]:
        return 1.0, 1.0


class DisplaySpace(CoordinateSpace):
    """Absolute pixels of the declared display; the rollout makes the viewport equal to it."""

    name = "openai-cua"

    def scale(self, width: int, height: int) -> tuple[float, float]:
        return 1.0, 1.0


class SmartResizedSpace(CoordinateSpace):
    """Absolute pixels of the smart-resized image the model saw (UI-TARS-1.5, Qwen2.5-VL)."""

    name = "uitars-1.5"

    def scale(self, width: int, height: int) -> tuple[float, float]:
        resized_width, resized_height = smart_resize(width, height)
        return width / resized_width, height / resized_height


class RelativeSpace(CoordinateSpace):
    """Relative 0–`extent` on both axes (UI-TARS-1.0 uses 0–1000)."""

    name = "uitars-1.0"

    def __init__(self, extent: float = 1000.0):
        self.extent = extent

    def scale(self, width: int, height: int) -> tuple[float, float]:
        return width / self.extent, height / self.extent


_SPACES: dict[str, CoordinateSpace] = {
    space.name: space for space in (ScreenSpace(), DisplaySpace(), SmartResizedSpace(), RelativeSpace())
}


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


def action_to_screen(action: Action, space: str | CoordinateSpace, width: int, height: int) -> Action:
    """`action` with its points converted from `space` to viewport pixels (other fields unchanged)."""
    resolved = coordinate_space(space) if isinstance(space, str) else space
    update: dict[str, Point] = {}
    if action.point is not None:
        update["point"] = resolved.to_screen(action.point, width, height)
    if action.end is not None:
        update["end"] = resolved.to_screen(action.end, width, height)
    return action.model_copy(update=update) if update else action


def action_from_screen(action: Action, space: str | CoordinateSpace, width: int, height: int) -> Action:
    """`action` with its points converted from viewport pixels to `space` (e.g. to script a model)."""
    resolved = coordinate_space(space) if isinstance(space, str) else space
    update: dict[str, Point] = {}
    if action.point is not None:
        update["point"] = resolved.from_screen(action.point, width, height)
    if action.end is not None:
        update["end"] = resolved.from_screen(action.end, width, height)
    return action.model_copy(update=update) if update else action
