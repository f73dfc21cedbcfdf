"""Which changes touched the tasks that flipped, and what each principle is associated with.

A task *flips* when it fails on the revised version and passes on the new one (gained) or the
reverse (lost). Only tasks with a valid checker on both versions count, so a flip is the agent's
doing, not the verifier's; repeat 0's rollouts are compared. A change *touches* a task when an
element the change changed is, contains, or shares an id or class with an element the task's
trajectories acted on (either version) or its checkers read. Per principle, over the tasks its
applied changes touched: gained, lost, and the paired difference of SR after − before with
Newcombe's 95 % interval and McNemar's exact p. These are associations — every change of a revision
ships together; `aui insights ablate` measures a principle's effect by leaving it out.
"""

from __future__ import annotations

from collections.abc import Iterable
from contextlib import suppress
from pathlib import Path

from results import (
    AppRoundResult,
    Change,
    PrincipleRow,
    TaskFlip,
    TaskOutcome,
    mcnemar_exact_p,
    paired_difference_interval,
    rounded,
)
from verifier import AppVerdicts, compile_checker, read_verdicts

from ._changes import NO_PRINCIPLE, Revision, principle_status
from ._dom import Version, selector_tokens
from ._page import acted_on


def task_elements(run_dir: Path, outcomes: Iterable[TaskOutcome], verdicts: Iterable[AppVerdicts]) -> list[str]:
    """Selectors a task touches: every target its trajectories acted on, and every selector its checkers read
    (`verdicts`: the versions' verdicts, read once per revision)."""
    outcomes = list(outcomes)
    found = acted_on(run_dir, outcomes)
    task_id = next((o.task_id for o in outcomes), None)
    for judged in verdicts:
        try:
            verdict = judged.verdict(task_id)
        except KeyError:
            continue
        if verdict.checker:
            with suppress(ValueError):
                found += compile_checker(verdict.checker).selectors
    return list(dict.fromkeys(found))


def touches(change: Change, elements: list[str], new: Version) -> bool:
    """Whether an element `change` changed is, contains, or names the same id/class as one of `elements`."""
    if change.page_wide:
        return True
    wanted = set().union(*(selector_tokens(e) for e in elements)) if elements else set()
    found = [tag for tag in (new.element(e) for e in elements) if tag is not None]
    for changed in change.changed_elements:
        if selector_tokens(changed) & wanted:
            return True
        container = new.element(changed)
        if container is not None and any(tag is container or container in tag.parents for tag in found):
            return True
    return False


def attribute(revisions: list[tuple[Path, Revision]]) -> tuple[list[TaskFlip], list[PrincipleRow], dict]:
    """The flips with the changes that touched them, and the principle table, over the valid task pairs of
    `revisions` (each with the run folder it belongs to)."""
    flips: list[TaskFlip] = []
    pairs: dict[str, list[tuple[bool, bool]]] = {}
    revisions_with: dict[str, set[str]] = {}
    counts = {"pairs": 0, "left_out": 0}
    for run_dir, revision in revisions:
        after, before = revision.result, revision.before
        counted = [c for c in revision.changes if c.counted and c.applied]
        for principle in {c.principle or NO_PRINCIPLE for c in counted}:
            if principle_status(revision, principle) == "applied":
                revisions_with.setdefault(principle, set()).add(f"{run_dir}/{revision.key}")
        previous = {t.task_id: t for t in before.tasks}
        verdicts = _verdicts(run_dir, before, after)
        for task in after.tasks:
            old = previous.get(task.task_id)
            if old is None or not (old.checker_valid and task.checker_valid):
                counts["left_out"] += 1
                continue
            counts["pairs"] += 1
            elements = task_elements(run_dir, [old, task], verdicts)
            linked = [c for c in counted if touches(c, elements, revision.new)]
            for principle in {c.principle or NO_PRINCIPLE for c in linked}:
                pairs.setdefault(principle, []).append((old.passed, task.passed))
            if old.passed != task.passed:
                flips.append(TaskFlip(
                    run=str(run_dir), app_id=after.app_id, track=str(after.track),
                    round=after.round, revised_from=before.round, task_id=task.task_id,
                    direction="gained" if task.passed else "lost", elements=elements,
                    changes=[c.id for c in linked], principles=sorted({c.principle or NO_PRINCIPLE for c in linked}),
                    trajectories=[t for t in (old.trajectory, task.trajectory) if t]))
    changes = [c for _, revision in revisions for c in revision.changes
               if c.counted and c.status in ("applied", "unverifiable")]
    rows = [_principle_row(principle, changes, pairs.get(principle, []), len(revisions_with.get(principle, ())))
            for principle in sorted({c.principle or NO_PRINCIPLE for c in changes})]
    return flips, rows, counts


def _principle_row(principle: str, changes: list[Change], pairs: list[tuple[bool, bool]], revisions: int) -> PrincipleRow:
    """`changes`: the counted changes applied or unverifiable, of every principle."""
    everything = [c for c in changes if (c.principle or NO_PRINCIPLE) == principle]
    mine = [c for c in everything if c.applied]
    both = sum(b and a for b, a in pairs)
    gained = sum(a and not b for b, a in pairs)
    lost = sum(b and not a for b, a in pairs)
    neither = len(pairs) - both - gained - lost
    return PrincipleRow(
        principle=principle, applied=len(mine), unverifiable=len(everything) - len(mine),
        apps=len({c.app_id for c in mine}), revisions=revisions,
        tasks=len(pairs), gained=gained, lost=lost, net=(gained - lost) / len(pairs) if pairs else None,
        net_ci95=rounded(paired_difference_interval(both, gained, lost, neither)) if pairs else None,
        mcnemar_p=round(mcnemar_exact_p(gained, lost), 6) if pairs else None)


def _verdicts(run_dir: Path, *results: AppRoundResult) -> list[AppVerdicts]:
    """The versions' verdicts (an unreadable file: its checkers name nothing)."""
    found = []
    for result in results:
        with suppress(OSError, ValueError):
            found.append(read_verdicts(run_dir / Path(result.html).parent / "verdicts.json"))
    return found
