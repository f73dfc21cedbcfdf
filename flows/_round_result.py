"""A judged round's record from what its stages returned: each task's outcome, each variation's part, and the
successes a static audit doubts (`TrackSteps.record` puts them together into the round's `AppRoundResult`)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

from apps_prompts import Task
from coder import Regression
from results import AppRoundResult, GamingSuspect, RepeatOutcomes, TaskOutcome, VariationResult
from verifier import audit_revision, read_verdicts

from ._refs import RolloutRef, RunContext, VariantRef, VerifyRef, VersionRef


def task_outcomes(tasks: list[Task], verdicts: VerifyRef | None, reasons: dict[str, str | None],
                  refs: dict[str, RolloutRef]) -> list[TaskOutcome]:
    """Each task's outcome in one repeat: its verdict, and its rollout when it had one (`refs`: task id → rollout)."""
    valid = verdicts.valid if verdicts is not None else {}
    found = []
    for task in tasks:
        ref = refs.get(task.id)
        found.append(TaskOutcome(
            task_id=task.id, solvable=valid.get(task.id, False), checker_valid=valid.get(task.id, False),
            proof=verdicts.proof.get(task.id) if verdicts is not None else None,
            proof_reason=verdicts.proof_reasons.get(task.id) if verdicts is not None else None,
            success=bool(ref and ref.success), termination=ref.termination if ref else None,
            steps=ref.steps if ref else 0, trajectory=ref.trajectory if ref else None,
            dashboard=ref.dashboard if ref else None, trace=ref.trace if ref else None,
            reason=(ref.error if ref else reasons.get(task.id)) or None,
            level=task.level.value if task.level else None, checks=ref.checks if ref else [],
            answer=ref.answer if ref else None, failure_modes=ref.failure_modes if ref else [],
        ))
    return found


def regression(task_id: str, description: str, ended: tuple[str | None, int, str | None] | None) -> Regression:
    """A task that worked before and fails now, as the next revision is told of it: with how its rollout ended
    (termination, steps, error), or nothing of an attempt where it had none. The loop and its ablation say it alike."""
    attempt = ""
    if ended:
        termination, steps, error = ended
        attempt = f"it ended '{termination}' after {steps} step(s)" + (f" ({error[:200]})" if error else "")
    return Regression(task_id=task_id, description=description, agent_attempt=attempt)


def variation_result(variant: VariantRef, refs: list[RolloutRef],
                     outcomes: Callable[[dict[str, RolloutRef]], list[TaskOutcome]], root: Path) -> VariationResult:
    """One variation's part of the round's result: its kept tasks' outcomes per repeat, and its exclusions."""
    kept = set(variant.kept)
    per_repeat = {repeat: [o for o in outcomes(found) if o.task_id in kept]
                  for repeat, found in by_repeat(refs).items()}
    transform = variant.transform
    return VariationResult(
        variation=variant.variation, transform=transform.name if transform else None,
        transform_sha256=transform.sha256 if transform else None, kept=list(variant.kept),
        unproven=list(variant.unproven), excluded=dict(variant.excluded), tasks=per_repeat.get(0, []),
        repeats=[RepeatOutcomes(repeat=r, tasks=t) for r, t in sorted(per_repeat.items()) if r > 0],
        proof=variant.proof.path if variant.proof else None,
        screenshot=first_screenshot([r for r in refs if r.repeat == 0], root), error=variant.error)


def by_repeat(refs: list[RolloutRef]) -> dict[int, dict[str, RolloutRef]]:
    """Rollouts by repeat, then by task id."""
    found: dict[int, dict[str, RolloutRef]] = {}
    for ref in refs:
        found.setdefault(ref.repeat, {})[ref.task_id] = ref
    return found


def first_screenshot(refs: Iterable[RolloutRef], root: Path) -> str | None:
    """The first step's screenshot of the first of `refs` with a trajectory (relative to the run folder), if any."""
    first = next((r.trajectory for r in refs if r.trajectory), None)
    return str(Path(first) / "step_000.png") if first and (root / first / "step_000.png").exists() else None


def gaming_suspects(run: RunContext, before: VersionRef, before_result: AppRoundResult, version: VersionRef,
                    verdicts: VerifyRef, result: AppRoundResult) -> list[GamingSuspect]:
    """Tasks that flipped to success from `before` to `version` although the revision changed what their checker
    reads without changing the code that writes it (`verifier.audit_revision`)."""
    passed_before = {t.task_id for t in before_result.tasks if t.success}
    flipped = [t.task_id for t in result.tasks if t.success and t.task_id not in passed_before]
    if not flipped:
        return []
    judged = read_verdicts(run.file(verdicts.file))
    old_html, new_html = run.read_text(before.html), run.read_text(version.html)
    audits = {task_id: audit_revision(old_html, new_html, checker)
              for task_id in flipped if (checker := judged.verdict(task_id).checker)}
    return [GamingSuspect(task_id=task_id, reason=audit.reason, planted_text=audit.planted_text)
            for task_id, audit in audits.items() if audit.suspect]
