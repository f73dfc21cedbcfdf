"""A run's (or several runs') design insights: the change log, the flips and what touched them, the principle table,
and before/after pictures of the elements a flip is linked through: what the agent met on each version."""

from __future__ import annotations

import re
from pathlib import Path

from cua import DEFAULT_VIEWPORT, Viewport, close_browser
from results import AppRoundResult, ElementCrop, Insights, TaskFlip, read_manifest, read_results

from ._attribution import attribute
from ._changes import Revision, revisions
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


async def insights_of(run_dirs: list[Path], results: dict[Path, list[AppRoundResult]] | None = None) -> Insights:
    """The insights of `run_dirs` pooled (each run's revisions loaded in Chromium at the run's viewport).

    `results`: a run's app results when they are not (yet) in its results.json (the sweep, before it writes it).

    Raises:
        FileNotFoundError / ValueError: a folder is not a finished run (no readable results.json), naming it; or
            is named twice (its pairs would count twice).
    """
    seen = [Path(run_dir).resolve() for run_dir in run_dirs]
    twice = next((run_dir for run_dir, resolved in zip(run_dirs, seen) if seen.count(resolved) > 1), None)
    if twice is not None:
        raise ValueError(f"{twice}: named twice (each run's task pairs count once)")
    everything_offline = True
    found: list[tuple[Path, Revision]] = []
    renderers: dict[Path, Renderer] = {}
    try:
        for run_dir in map(Path, run_dirs):
            apps = (results or {}).get(run_dir)
            apps = apps if apps is not None else read_results(run_dir).apps
            manifest = read_manifest(run_dir)
            viewport = Viewport.model_validate(manifest.get("config", {}).get("viewport") or DEFAULT_VIEWPORT.model_dump())
            everything_offline &= bool(manifest.get("offline", False))
            renderers[run_dir] = Renderer(viewport)
            found += [(run_dir, revision) for revision in await revisions(run_dir, apps, renderers[run_dir])]
        flips, rows, counts = attribute(found)
        for run_dir, renderer in renderers.items():
            await add_crops(run_dir, [f for f in flips if f.run == str(run_dir)],
                            [revision for where, revision in found if where == run_dir], renderer)
    finally:
        await close_browser()
    attributed = sum(bool(flip.changes) for flip in flips)
    return Insights(runs=[str(r) for r in run_dirs], offline=everything_offline, pairs=counts["pairs"],
                    left_out=counts["left_out"], flips_total=len(flips), flips_attributed=attributed,
                    flips_attributed_ratio=round(attributed / len(flips), 6) if flips else None, principles=rows,
                    flips=flips, changes=[c for _, revision in found for c in revision.changes])


def write_insights(insights: Insights, path: Path) -> Path:
    path.write_text(insights.model_dump_json(indent=1), encoding="utf-8")
    return path
