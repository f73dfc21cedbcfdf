"""The offline commenter: the commenter's JSON computed from measured facts, no model involved.

Statements are ranked by how directly they explain a failure: controls the task needed that
were off-screen, actions with no effect, values reachable only by dragging, tiny targets,
transient state, then page-wide hygiene (ids, animations, names, contrast). Each names the
element and the principle; at least three are always produced (the schema asks for 3–6), using
page-wide facts to fill up when the trajectory gives fewer.
"""

from __future__ import annotations

from pathlib import Path

from cua import PageTransform, Trajectory

from ._facts import ElementFact, NoEffectStep, OfflineFacts, collect_facts
from ._feedback import Comment, TaskComment, selectors_in, validate_comment

MAX_CHANGES = 6
MAX_ISSUES = 3


def _name(element: ElementFact | NoEffectStep) -> str:
    text = f' ("{element.text[:30]}")' if element.text else ""
    return f"`{element.selector}`{text}"


def _names(elements: list[ElementFact], limit: int = 3) -> str:
    shown = ", ".join(f"`{e.selector}`" for e in elements[:limit])
    return shown + (f" and {len(elements) - limit} more" if len(elements) > limit else "")


def _page_wide_changes(facts: OfflineFacts, needed: list[ElementFact]) -> list[str]:
    """Changes from what the page shows at rest (covered, unnamed, animated, faint, oversized), none of them an issue."""
    vw, vh = facts.viewport_width, facts.viewport_height
    found: list[str] = []
    if facts.obscured_controls:
        found.append(f"Uncover {_names(facts.obscured_controls)}: another element sits on top of them — interaction robustness.")
    if facts.missing_ids:
        found.append(f"Give stable, descriptive ids to {_names(facts.missing_ids)} — interaction robustness.")
    if animated := facts.animations or facts.transitions:
        found.append(
            f"Remove CSS animations/transitions on {_names(animated)} so the page is still when an action settles — predictable behaviour."
        )
    if facts.unnamed_controls:
        found.append(f"Give {_names(facts.unnamed_controls)} visible text or an aria-label — interaction robustness.")
    if facts.low_contrast:
        low = facts.low_contrast[0]
        found.append(f"Raise the text contrast of `{low.selector}` ({low.detail}) to at least 4.5:1 — state visibility.")
    if facts.overflows_viewport and not needed:
        found.append(
            f"Fit the page (`body`, {facts.page_width}×{facts.page_height} px) within {vw}×{vh} so nothing needs scrolling — interaction robustness."
        )
    return found


def comment_from_facts(facts: OfflineFacts) -> Comment:
    """The commenter JSON for `facts` (validated against the schema before it is returned)."""
    changes: list[str] = []
    issues: list[str] = []
    vw, vh = facts.viewport_width, facts.viewport_height

    needed = facts.task_controls_off_viewport
    if needed:
        first = needed[0]
        where = f" (at y={first.box['y']:.0f})" if first.box else ""
        changes.append(
            f"Move {_name(first)}{where} into the top {vw}×{vh} area so it is visible and clickable without scrolling"
            + (f"; likewise {_names(needed[1:])}" if len(needed) > 1 else "")
            + " — interaction robustness."
        )
        issues.append(f"{len(needed)} control(s) the task needs are outside the {vw}×{vh} viewport, e.g. `{first.selector}`")
    for step in [s for s in facts.no_effect_steps if s.selector][:2]:
        changes.append(
            f"Make {_name(step)} change the DOM visibly at once when used (step {step.step}, {step.action}, changed nothing), "
            "or remove it if it is decorative — state visibility."
        )
    if facts.no_effect_steps:
        first = facts.no_effect_steps[0]
        issues.append(f"step {first.step} {first.action} on `{first.selector or '?'}` changed nothing in the DOM")
    if facts.slider_only_inputs:
        slider = facts.slider_only_inputs[0]
        changes.append(
            f"Add a number input (or −/+ step buttons) beside {_name(slider)} so its value can be typed or clicked, "
            "not only dragged" + (f"; same for {_names(facts.slider_only_inputs[1:])}" if len(facts.slider_only_inputs) > 1 else "")
            + " — input permissiveness."
        )
        issues.append(f"`{slider.selector}` can only be set by dragging")
    if facts.small_targets:
        small = facts.small_targets[0]
        changes.append(
            f"Enlarge {_name(small)} ({small.detail}) to at least 24×24 px (44×44 preferred)"
            + (f", and {_names(facts.small_targets[1:])}" if len(facts.small_targets) > 1 else "")
            + " — interaction robustness."
        )
        if len(issues) < MAX_ISSUES:
            issues.append(f"{len(facts.small_targets)} target(s) smaller than 24×24 px, e.g. `{small.selector}`")
    if facts.transient_status:
        toast = facts.transient_status[0]
        changes.append(
            f"Keep the message in `{toast.selector}` (\"{toast.text[:30]}\") on screen until the next action instead of "
            "hiding it on a timer — state visibility."
        )
        if len(issues) < MAX_ISSUES:
            issues.append(f"state shown only transiently in `{toast.selector}`")
    changes += _page_wide_changes(facts, needed)
    # Fill up to the schema's minimum with page-wide, still element-specific advice.
    fillers = [
        "Show the result of every action as text in one persistent element such as `#status` (role=status) — state visibility.",
        "Start from a neutral state on load (`body`: no pre-selected options, timers stopped, no random content) — predictable behaviour.",
        "Accept typed values wherever a value is chosen (`input[type=number]` beside pickers and sliders) — input permissiveness.",
    ]
    changes += fillers[:max(0, 3 - len(changes))]
    changes = [c for c in changes if selectors_in(c)]  # every statement must name an element
    if not issues:
        issues.append("no measurable obstacle found; the failure may be in the task logic" if facts.measured_page else "app page not measured")
    data = {
        "issues": [i[:200] for i in issues[:MAX_ISSUES]],
        "actionable_changes": [c[:400] for c in changes[:MAX_CHANGES]],
        "fit_within_screen": bool(needed or facts.off_viewport_controls or facts.overflows_viewport),
        "avoid_regressions": True,  # measured facts never show what must change wholesale: keep what works
    }
    return validate_comment(data)


class OfflineCommenter:
    """The commenter JSON from measured facts of the app (when `html` is given) and the trajectory."""

    offline = True
    mode = "facts"

    def __init__(self, use_axe: bool = True, replay: bool = True):
        self.use_axe = use_axe
        self.replay = replay

    async def comment(self, trajectory_dir: Path | str, *, html: str | bytes | None = None,
                      transform: PageTransform | None = None) -> TaskComment:
        """Comment on one trajectory; `html` is the app version the trajectory ran on (under `transform`)."""
        trajectory = Trajectory.load(Path(trajectory_dir))
        facts = await collect_facts(html, trajectory, use_axe=self.use_axe, replay=self.replay, transform=transform)
        return TaskComment(
            app_id=trajectory.app_id,
            task_id=trajectory.task_id,
            task=trajectory.task,
            commenter="offline",
            mode="facts",
            offline=True,
            comment=comment_from_facts(facts),
            facts=facts,
        )
