"""How much a variation changes what the agent sees: the share of the screen that looks different.

Counted in cells of `CELL` × `CELL` screen pixels: a cell changed when any of its pixels differs
at all (renders are deterministic, so an unchanged region is byte-identical). Counting pixels
instead would make the figure depend on how much flat background an app has — a page zoomed to
80 % looks plainly different yet keeps most of its background pixels — whereas cells measure how
much of the screen a viewer sees change. A font variation can change only the text, so it is also
measured over the cells that hold text (`text_cells`).
"""

from __future__ import annotations

import io
from pathlib import Path

from PIL import Image, ImageChops

from cua import isolated_world

CELL = 16
_TEXT_BOXES_JS = Path(__file__).with_name("_text_boxes.js").read_text(encoding="utf-8")


def changed_cells(before: bytes, after: bytes, cell: int = CELL) -> set[tuple[int, int]]:
    """The (column, row) cells in which the two screenshots differ (every cell, if their sizes differ)."""
    first, second = Image.open(io.BytesIO(before)).convert("RGB"), Image.open(io.BytesIO(after)).convert("RGB")
    columns, rows = first.width // cell, first.height // cell
    if first.size != second.size:
        return {(c, r) for c in range(columns) for r in range(rows)}
    diff = ImageChops.difference(first, second).convert("L").point(lambda v: 255 if v else 0)
    # A cell's mean is non-zero exactly when one of its pixels differs.
    means = diff.crop((0, 0, columns * cell, rows * cell)).reduce(cell)
    return {(c, r) for r in range(rows) for c in range(columns) if means.getpixel((c, r))}


def changed_share(before: bytes, after: bytes, cell: int = CELL, within: set[tuple[int, int]] | None = None) -> float:
    """The share of the screen's cells (or of the cells `within`) that differ between two screenshots."""
    image = Image.open(io.BytesIO(before))
    everything = {(c, r) for c in range(image.width // cell) for r in range(image.height // cell)}
    cells = everything if within is None else within & everything
    return len(changed_cells(before, after, cell) & cells) / len(cells) if cells else 0.0


async def text_cells(page, cell: int = CELL) -> set[tuple[int, int]]:
    """The cells in which the page now draws visible text."""
    boxes = await isolated_world(page).call(_TEXT_BOXES_JS, timeout_ms=5_000) or []
    return {(column, row) for left, top, width, height in boxes
            for column in range(int(max(left, 0)) // cell, int(left + width) // cell + 1)
            for row in range(int(max(top, 0)) // cell, int(top + height) // cell + 1)}
