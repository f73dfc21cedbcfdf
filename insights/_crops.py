"""Before/after pictures of the elements a flip is linked through: what the agent met on each version."""

from __future__ import annotations

import re
from pathlib import Path

from results import ElementCrop, TaskFlip

from ._changes import Revision
from ._dom import selector_tokens
from ._render import Renderer

CROPS_FOLDER = Path("insights") / "crops"
MAX_FLIPS_CROPPED = 60  # a run's pictures stay a few megabytes; the rest are listed without them
MAX_ELEMENTS = 2


def linked_elements(flip: TaskFlip, revision: Revision) -> list[str]:
    """The elements to show: those a linked change changed that the task touched, else the linked changes'."""
    changed = [e for c in revision.changes if c.id in flip.changes for e in c.changed_elements]
    wanted = set().union(*(selector_tokens(e) for e in flip.elements)) if flip.elements else set()
    shared = [e for e in changed if selector_tokens(e) & wanted]
    return list(dict.fromkeys(shared or changed))[:MAX_ELEMENTS]


async def add_crops(run_dir: Path, flips: list[TaskFlip], revisions: list[Revision], renderer: Renderer) -> None:
    """Fill each flip's `crops` (the first MAX_FLIPS_CROPPED flips with linked changes) under <run>/insights/crops/."""
    by_key = {(r.result.app_id, r.result.round, str(r.result.track)): r for r in revisions}
    cropped = 0
    for flip in flips:
        revision = by_key.get((flip.app_id, flip.round, flip.track))
        if revision is None or not flip.changes or cropped >= MAX_FLIPS_CROPPED:
            continue
        elements = linked_elements(flip, revision)
        if not elements:
            continue
        cropped += 1
        stem = _slug(f"{flip.app_id}-{flip.task_id}-r{flip.round}-{flip.track}")
        paths = {side: {e: CROPS_FOLDER / f"{stem}-{n}-{side}.png" for n, e in enumerate(elements)}
                 for side in ("before", "after")}
        drawn = {}
        for side, result in (("before", revision.before), ("after", revision.result)):
            html = (run_dir / result.html).read_text(encoding="utf-8")
            drawn[side] = await renderer.crops(html, elements, {e: run_dir / p for e, p in paths[side].items()})
        flip.crops = [ElementCrop(element=e, before=str(paths["before"][e]) if drawn["before"][e] else None,
                                  after=str(paths["after"][e]) if drawn["after"][e] else None) for e in elements]


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", text).strip("-")[:120]
