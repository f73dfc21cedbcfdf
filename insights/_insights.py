"""A run's (or several runs') design insights: the change log, the flips and what touched them, the principle table."""

from __future__ import annotations

from pathlib import Path

from cua import DEFAULT_VIEWPORT, Viewport, close_browser
from results import AppRoundResult, Insights, read_manifest, read_results

from ._attribution import attribute
from ._changes import Revision, revisions
from ._crops import add_crops
from ._render import Renderer


async def insights_of(run_dirs: list[Path], results: dict[Path, list[AppRoundResult]] | None = None) -> Insights:
    """The insights of `run_dirs` pooled (each run's revisions loaded in Chromium at the run's viewport).

    `results`: a run's app results when they are not (yet) in its results.json (the sweep, before it writes it).

    Raises:
        FileNotFoundError / ValueError: a folder is not a finished run (no readable results.json), naming it.
    """
    everything_offline = True
    found: list[tuple[Path, Revision]] = []
    renderers: dict[Path, Renderer] = {}
    try:
        for run_dir in map(Path, run_dirs):
            apps = (results or {}).get(run_dir)
            apps = apps if apps is not None else read_results(run_dir).apps
            manifest = read_manifest(run_dir) or {}
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
