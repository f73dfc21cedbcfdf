"""The loop's back half as Prefect tasks: comment on failed rollouts, then revise the app."""

from __future__ import annotations

import json
from pathlib import Path

from prefect import task

from coder import Feedback as CoderFeedback
from coder import Regression, RevisionRequest, UnsupportedTask, get_coder
from commenter import Feedback, comment_app, get_commenter
from cua import Viewport
from llm import BUDGET_REACHED, BudgetReached, RoleProvider
from results import Track
from verifier import read_verdicts

from ._cache import stage_cache
from ._dask import on_worker_loop
from ._refs import FeedbackRef, FileRef, RunContext, VersionRef
from ._stages import MODEL_RETRIES, client_for, model_client, spec_with_tasks


@task(cache_policy=stage_cache("comment"), persist_result=True, task_run_name="comment {app_id} r{round} ({commenter.name})", **MODEL_RETRIES)
@on_worker_loop
async def comment_failures(*, run: RunContext, app_id: str, round: int, html: FileRef, trajectories: list[str],
                           commenter: RoleProvider, track: Track, sources: list[str] | None = None,
                           detector: RoleProvider | None = None) -> FeedbackRef | None:
    """One comment per failed rollout, merged per app (deduplicated, capped) into feedback.json.

    `sources` (the config's `feedback`; None: the commenter's only): with `defects`, the GUI defects
    `detector` finds in the failed rollouts' tuples are added (`Feedback.defects`).
    """
    if track.mode == "unsupported" or track.commenter_mode is None or not trajectories:
        return None  # the `unsupported` mode revises from the verifier's reasons alone
    sources = sources or ["commenter"]
    mode = track.commenter_mode
    if commenter.model is None:  # the commenter's own implementation (`experiment` resolved the name)
        chosen = get_commenter(commenter.name, mode=mode)
    else:
        # Called through a role of its own per commenter mode (`commenter:dashboard`, mapped to the
        # chosen model), so the usage ledger gives each mode's tokens and cost (the paper's Table 5).
        role = f"commenter:{mode}"
        chosen = get_commenter(role, client=model_client(run, {role: commenter.name}), mode=mode)
    if "commenter" in sources:
        feedback = await comment_app(app_id, [run.root / folder for folder in sorted(trajectories)], chosen,
                                     html=run.read_text(html))
        refused = [source for source in feedback.sources if source.error and BUDGET_REACHED in source.error]
        if refused:
            # Feedback missing comments the budget refused is not this stage's result (it would be cached):
            # the stage fails, and a re-run with a higher budget comments again (comments made come from the call cache).
            raise BudgetReached(f"commenting {app_id} round {round}: {refused[0].error}", model=commenter.name, endpoint="budget")
    else:
        feedback = Feedback(app_id=app_id, offline=True)
    if "defects" in sources:
        from ._defect_feedback import detected_defects

        feedback.defects = await detected_defects(run, run.read_text(html), trajectories, detector)
    file = run.write(Path("apps", app_id, track.folder, f"feedback-round-{round}.json"),
                     feedback.model_dump_json(indent=1))
    # A commenter that failed for a task is recorded in the feedback's sources, not raised (the
    # revision goes ahead without that comment); the flow lists these in the results.
    errors = [f"{source.task_id}: {source.error}" for source in feedback.sources if source.error]
    return FeedbackRef(app_id=app_id, file=file, items=len(feedback.actionable_changes) + len(feedback.defects),
                       offline=feedback.offline, errors=errors)


@task(cache_policy=stage_cache("revise"), persist_result=True, task_run_name="revise {app_id} → r{round} ({track.mode})", **MODEL_RETRIES)
@on_worker_loop
async def revise_version(*, run: RunContext, app_id: str, round: int, html: FileRef, verdicts: FileRef,
                         tasks: FileRef, feedback: FileRef | None, track: Track, style_block: bool | None,
                         regressions: list[Regression], viewport: Viewport, coder: RoleProvider,
                         omit_principles: list[str] | None = None, omit_transforms: list[str] | None = None) -> VersionRef:
    """The next version, fitted to `viewport`, with the non-regression contract checked and recorded in revision.json.

    A version whose contract is still violated after the coder's retry is kept (as the paper
    does) and the violation is shown in the report. `coder`: the track's coder's provider. `omit_principles` / `omit_transforms`: an
    ablation (`flows.ablate`) — the offline coder leaves those transforms out.
    """
    spec = spec_with_tasks(run, app_id, tasks)
    judged = read_verdicts(run.file(verdicts))
    descriptions = {t.id: t.description for t in spec.tasks}
    unsupported = [UnsupportedTask(task_id=v.task_id, description=descriptions.get(v.task_id, ""), reason="; ".join(v.reasons))
                   for v in judged.verdicts if not (v.solvable and v.checker)]
    checkers = [v.checker for v in judged.verdicts if v.solvable and v.checker]
    comments = [CoderFeedback.model_validate(json.loads(run.read_text(feedback)))] if feedback else []
    request = RevisionRequest(mode=track.mode, app=spec, html=run.read_text(html), unsupported=unsupported,
                              feedback=comments, checkers=checkers, style_block=style_block, regressions=regressions,
                              viewport=viewport, omit_principles=omit_principles or [],
                              omit_transforms=omit_transforms or [])
    result = await get_coder(coder.name, client_for(run, coder), v0_dir=run.v0_dir).revise(request)
    folder = Path("apps", app_id, track.folder, f"round-{round}")
    written = run.write(folder / "index.html", result.html)
    run.write(folder / "revision.json", json.dumps(result.model_dump(mode="json", exclude={"html"}), indent=1))
    return VersionRef(app_id=app_id, round=round, html=written, coder=coder.name, offline=result.offline,
                      contract=result.contract.model_dump(mode="json"),
                      transforms=[t.name for t in result.transforms], usage=result.usage.model_dump())
