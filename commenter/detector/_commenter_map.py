"""The commenter's findings as answers per transition tuple, so it is scored like a detector (design.md §11).

The commenter says what is wrong with a trajectory, not with each step; its findings are mapped to
the tuples they name:

- the offline commenter's measured facts: a step it lists as having no effect is called
  defective (`no-response`; `input-keyboard` for keys), and a tuple acting on an element it names
  is called defective with the type its fact stands for — covered (`elements-overlapping`), under
  24 px (`inconsistent-size`), low contrast (`inconsistent-colour`), no accessible name
  (`content-error`); every other tuple is called normal;
- a model commenter's statements: a tuple acting on an element a statement names (by id or
  selector) is called defective, without a type (the commenter does not speak in the taxonomy).
"""

from __future__ import annotations

from cua import ElementInfo, TransitionTuple

from .._feedback import TaskComment, selectors_in
from ._records import Detection

COMMENTER_DETECTOR = "commenter"
FACT_TYPES = {
    "obscured_controls": "elements-overlapping",
    "small_targets": "inconsistent-size",
    "low_contrast": "inconsistent-colour",
    "unnamed_controls": "content-error",
}
"""Which defect type each element-level fact of the offline commenter stands for."""


def _names(element: ElementInfo | None) -> set[str]:
    if element is None:
        return set()
    found = {element.selector} if element.selector else set()
    if element.id:
        found |= {f"#{element.id}", element.id}
    return found


def map_comment(comment: TaskComment, tuples: list[TransitionTuple], *, trajectory_id: str,
                detector: str = COMMENTER_DETECTOR) -> list[Detection]:
    """One detection per tuple from one trajectory's comment (see the module docstring)."""
    made = []
    facts = comment.facts
    statements = comment.comment.issues + comment.comment.actionable_changes if comment.comment else []
    named = {s for statement in statements for s in selectors_in(statement)}
    for item in tuples:
        detection = Detection(trajectory=trajectory_id, step=item.step, detector=detector, offline=comment.offline,
                              truth=item.defect, prompt_version=comment.commenter)
        if comment.comment is None and facts is None:
            detection.error = comment.error or "the commenter gave no comment"
            made.append(detection)
            continue
        detection.defect, detection.evidence = False, "the commenter names nothing this step acts on"
        element = _names(item.element)
        if facts is not None:
            no_effect = next((s for s in facts.no_effect_steps if s.step == item.step), None)
            if no_effect is not None:
                keys = item.action.kind in ("type", "hotkey")
                detection.defect, detection.type = True, "input-keyboard" if keys else "no-response"
                detection.evidence = f"step {item.step} {no_effect.action} changed nothing in the DOM"
            else:
                for field, kind in FACT_TYPES.items():
                    hit = next((f for f in getattr(facts, field)
                                if element & {f.selector, f.id and f"#{f.id}"} - {None, ""}), None)
                    if hit is not None:
                        detection.defect, detection.type = True, kind
                        detection.evidence = f"the commenter measured `{hit.selector}`: {field.replace('_', ' ')}" \
                                             + (f" ({hit.detail})" if hit.detail else "")
                        break
        elif element & named:
            detection.defect = True
            detection.evidence = f"a statement names {sorted(element & named)[0]}"
        made.append(detection)
    return made
