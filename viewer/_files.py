"""Files of a run folder, and nothing outside it.

Every path a page names is resolved (symbolic links and `..` included) and must stay inside the
run folder; anything else is "not found" — the viewer never says whether a file outside exists.
App versions are untrusted HTML: they are served in a sandbox (an opaque origin that cannot reach
the viewer's pages or its label endpoint).
"""

from __future__ import annotations

from pathlib import Path

# What a run folder holds that a page may show or link; anything else is not served.
CONTENT_TYPES = {
    ".png": "image/png",
    ".json": "application/json",
    ".jsonl": "application/x-ndjson",
    ".html": "text/html; charset=utf-8",
    ".md": "text/markdown; charset=utf-8",
    ".csv": "text/csv; charset=utf-8",
    ".txt": "text/plain; charset=utf-8",
    ".zip": "application/zip",
}

# An app version runs its own scripts, but as an opaque origin: no cookies, no storage shared with
# the viewer, no requests that carry the viewer's origin, no top-level navigation.
SANDBOX_CSP = "sandbox allow-scripts allow-forms allow-modals; default-src 'self' 'unsafe-inline' data: blob:"


def inside(base: Path, relative: str) -> Path | None:
    """`base/relative` if it names an existing file inside `base` (after resolving links); else None."""
    if not relative or "\x00" in relative or relative.startswith(("/", "\\")):
        return None
    base = base.resolve()
    try:
        target = (base / relative).resolve(strict=True)
    except (OSError, RuntimeError):
        return None
    if not target.is_relative_to(base) or not target.is_file():
        return None
    return target
