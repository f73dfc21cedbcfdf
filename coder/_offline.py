"""The offline coder: no model. v0 is an existing file; a revision is deterministic rewrites.

v0 is the app's reference HTML, or `ID/index.html` from a `v0_dir` of existing apps (such as
the GPT-5 apps in ../shared/data/gpt5-apps). A revision applies the agent-centric transforms
that the feedback and unsupported tasks call for (see `_plan.py`), then checks the same
non-regression contract as the LLM coder; if a transform ever broke it, the revision falls back
to the input HTML rather than return a version that loses checker ids or functions.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

from apps_prompts import AppSpec, reference_html_path
from cua import DEFAULT_VIEWPORT, Viewport

from ._contract import missing_items, plan_contract
from ._document import AppDocument
from ._models import Coder, AppliedTransform, CoderError, GenerationResult, RevisionRequest, RevisionResult
from ._plan import BY_NAME, plan_transforms
from ._prompts import merge_feedback

logger = logging.getLogger("coder")

OFFLINE_VERSION = "offline-transforms-v2"
"""Recorded with each offline version (`prompt_version`), so a reader can tell which transforms made it.
The stages' cache keys need no bump: they cover this module's code itself (`flows._cache`)."""


class OfflineCoder(Coder):
    """Deterministic coder for offline runs, tests and benchmarks (labelled offline everywhere)."""

    offline = True

    def __init__(self, name: str = "offline", *, v0_dir: str | Path | None = None) -> None:
        self.name = name
        self.v0_dir = Path(v0_dir) if v0_dir is not None else None

    async def generate(self, app: AppSpec, *, viewport: Viewport = DEFAULT_VIEWPORT) -> GenerationResult:
        """v0 as it is on disk: an existing file is not refitted to `viewport`."""
        path, source = self._v0_path(app)
        try:
            html = await asyncio.to_thread(path.read_text, encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            raise CoderError(f"offline coder: cannot read v0 of app {app.id!r} at {path}: {error}") from error
        return GenerationResult(
            app_id=app.id, html=html, coder=self.name, offline=True, source=f"{source}:{path}",
            prompt_version=OFFLINE_VERSION,
        )

    async def revise(self, request: RevisionRequest) -> RevisionResult:
        return await asyncio.to_thread(self.revise_sync, request)

    def revise_sync(self, request: RevisionRequest) -> RevisionResult:
        """`revise` without the event loop (the rewrites are CPU work on one string)."""
        plan = plan_transforms(request)
        contract = plan_contract(request.html, request.checkers, request.protected_ids)
        applied: list[AppliedTransform] = []
        html = request.html
        if plan:
            try:
                document = AppDocument(request.html)
            except ValueError as error:
                raise CoderError(f"offline coder: app {request.app.id!r}: {error}") from error
            for name, triggers in plan.items():
                transform = BY_NAME[name]
                outcome = transform.run(document, request.viewport)
                applied.append(AppliedTransform(
                    name=name, principle=transform.principle, triggered_by=triggers,
                    changes=outcome.changes, details=outcome.details,
                ))
            if any(a.changes for a in applied):
                document.ensure_charset()
                html = str(document)
        missing_ids, missing_functions = missing_items(contract, request.html, html)
        if missing_ids or missing_functions:
            # A transform bug must not cost the app its checkers: keep the input version.
            logger.error("offline revision of %s lost ids %s / functions %s; keeping the input HTML",
                         request.app.id, missing_ids, missing_functions)
            contract.first_missing_ids, contract.first_missing_functions = missing_ids, missing_functions
            contract.retried, contract.status = True, "kept_after_retry"
            html = request.html
            for item in applied:
                item.details.append("reverted: the revision broke the non-regression contract")
        return RevisionResult(
            app_id=request.app.id, mode=request.mode, html=html, coder=self.name, offline=True,
            prompt_version=OFFLINE_VERSION, style_block=request.resolved_style_block(), contract=contract,
            regression_task_ids=[r.task_id for r in request.regressions],
            unsupported_task_ids=[t.task_id for t in request.active_unsupported()],
            feedback_lines=len(merge_feedback(request.active_feedback(), request.viewport)),
            transforms=applied, changed=html != request.html,
        )

    def _v0_path(self, app: AppSpec) -> tuple[Path, str]:
        if self.v0_dir is not None:
            path = self.v0_dir / app.id / "index.html"
            if not path.is_file():
                known = sorted(p.name for p in self.v0_dir.iterdir() if (p / "index.html").is_file()) \
                    if self.v0_dir.is_dir() else []
                raise CoderError(
                    f"offline coder: no v0 for app {app.id!r} in {self.v0_dir} (expected {path}); "
                    f"apps there: {', '.join(known) or 'none'}"
                )
            return path, "v0-dir"
        path = reference_html_path(app)
        if path is None or not path.is_file():
            raise CoderError(
                f"offline coder: app {app.id!r} has no reference HTML (spec {app.source or '?'}); "
                "give it `reference_html` or pass a v0 directory (--v0-dir) with ID/index.html"
            )
        return path, "reference"


def make_offline_coder(name: str, client: Any = None, *, v0_dir: str | Path | None = None, **options: Any) -> OfflineCoder:
    """Registry factory for the `offline` coder; `client` is accepted and unused."""
    if options:
        raise TypeError(f"offline coder takes no options besides v0_dir; got {', '.join(options)}")
    return OfflineCoder(name, v0_dir=v0_dir)
