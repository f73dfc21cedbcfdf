"""GTArena's taxonomy of GUI defects, written once: each type's name, kind and definition.

Every reader takes the types from `DEFECT_TAXONOMY` — the tuples' labels (`DEFECT_TYPES`), perturb's
designs (one per type), the detector's prompt (the definitions) and its scores — so a type is added,
renamed or reworded here and nowhere else. It lives in `cua` because `cua` is the lowest folder all
of them may import. `tests/test_defect_types.py` checks that each folder has its part of every type
(a design that injects it, an offline rule that finds it) and none of a type this table lacks.

The order is the taxonomy's (display types first) and is part of what runs write: the detector's
prompt lists the types in it, and reports and metrics list them in it.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

DefectKind = Literal["display", "interaction"]


class DefectType(BaseModel):
    """One GUI defect type of the taxonomy."""

    model_config = ConfigDict(frozen=True)

    name: str = Field(description="Its name, as a tuple's label, a defect's marker and a detector's answer give it.")
    kind: DefectKind = Field(description="display (seen in one state) or interaction (seen across an action).")
    definition: str = Field(min_length=1, description="What the defect looks like, in one line, as the model detector "
                            "is told it (hashed into `commenter.detector.prompt_sha256()`: a changed word is a new "
                            "prompt).")


DEFECT_TAXONOMY: tuple[DefectType, ...] = (
    DefectType(name="content-error", kind="display",
               definition="text that does not fit the element or its place (a label naming another function, "
                          "placeholder words)"),
    DefectType(name="data-format-error", kind="display",
               definition="a value in the wrong type or format (NaN, undefined, null, [object Object], a number with "
                          "a long tail of decimals or in scientific notation)"),
    DefectType(name="element-missing", kind="display",
               definition="an element that should be there is not drawn (an empty gap where a control or its text "
                          "belongs)"),
    DefectType(name="elements-overlapping", kind="display",
               definition="two elements drawn over each other, one hiding part of the other"),
    DefectType(name="misalignment", kind="display",
               definition="an element out of line with the elements beside it"),
    DefectType(name="uneven-spacing", kind="display",
               definition="spacing around an element unlike the spacing between its neighbours"),
    DefectType(name="inconsistent-colour", kind="display",
               definition="an element in a colour unlike the other elements of its kind or the app's palette"),
    DefectType(name="inconsistent-size", kind="display",
               definition="an element larger or smaller than the other elements of its kind, or text cut off"),
    DefectType(name="abnormal-state", kind="display",
               definition="an element shown in a state it is not in (looks disabled, faded or selected while it "
                          "works)"),
    DefectType(name="no-response", kind="interaction",
               definition="the action on a control changed nothing on the screen"),
    DefectType(name="input-keyboard", kind="interaction",
               definition="typed text or keys did not arrive in the field (refused, or some keys dropped)"),
    DefectType(name="navigation-error", kind="interaction",
               definition="the control led to another view, tab or item than the one it names"),
    DefectType(name="unexpected-result", kind="interaction",
               definition="the action had an effect, but the wrong one (another value, another option, counted "
                          "twice)"),
)
"""The defect types in the taxonomy's order (display first)."""

DEFECT_TYPES: dict[str, DefectKind] = {defect.name: defect.kind for defect in DEFECT_TAXONOMY}
"""The defect types by name → kind, in the taxonomy's order (what labels, designs and metrics look up)."""
