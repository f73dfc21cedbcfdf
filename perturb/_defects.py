"""The defect catalogue: GTArena's GUI defect types as seeded serve-time changes bound to one element.

A defect is a `cua.PageTransform` like a variation (design.md §11), but aimed: it is bound to the
element one step of a task's reference solution acts on (`DefectSpec.selector`), and `_defects.js`
marks that element `INJECTED_ATTRIBUTE="defect:<type>"` — now and whenever the app re-renders it —
so every trajectory records when an agent acted on it (`cua.transition_tuples` labels by that).

- **Display** defects change how the bound element looks and nothing it does: CSS on the marker
  (misalignment, uneven spacing, an off-palette colour, another size, a disabled look, not drawn)
  or a text change (wrong words, a number in a wrong format), or an element drawn over it that lets
  the pointer through (overlapping). The task's reference solution still passes.
- **Interaction** defects change what the bound element does: its events are swallowed (no
  response), typed keys are refused or dropped (input/keyboard), a click goes to another control
  of its kind (navigation), or the operation lands on the wrong thing (unexpected result: a click
  delivered twice, the next option, a typed number's last digit changed). The task's reference
  solution then fails or leaves the checker false.

Whether a defect does what its kind promises is shown on the page (`prove_defect`), never assumed.
Every choice a defect makes (which words, which colour, how far) is drawn from its seed.
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from pydantic import BaseModel, ConfigDict, Field, field_validator

from apps_prompts import SolutionStep
from cua import DEFECT_PREFIX, DEFECT_TYPES, INJECTED_ATTRIBUTE, DefectKind, PageTransform
from llm import Registry, UnknownNameError

_DEFECTS_JS = Path(__file__).with_name("_defects.js").read_text(encoding="utf-8")

POINTER_STEPS = frozenset({"click", "dblclick", "check"})
ANY_STEP = frozenset({"click", "dblclick", "hover", "check", "fill", "press", "select"})


class DefectError(ValueError):
    """A defect type (or what it is bound to) is wrong; the message names it and the known ones."""


def _marked(defect_type: str) -> str:
    """The CSS selector of the element a defect of `defect_type` is bound to."""
    return f'[{INJECTED_ATTRIBUTE}="{DEFECT_PREFIX}{defect_type}"]'


@dataclass(frozen=True)
class DefectDesign:
    """One defect type as this catalogue injects it."""

    type: str
    summary: str
    binds_to: frozenset[str]
    """The reference-solution step actions whose element it can be bound to."""
    draw: Callable[[random.Random], dict[str, Any]] = field(default=lambda random_: {})
    """Its seeded choices (the script's `params`, and the CSS's values)."""
    css: Callable[[str, dict[str, Any]], str] = field(default=lambda selector, params: "")
    """Its CSS on the bound element's marker, from the choices."""
    applies: Callable[[SolutionStep], bool] = field(default=lambda step: True)
    """A further test of a step (e.g. a number to change in what it types)."""

    @property
    def kind(self) -> DefectKind:
        return DEFECT_TYPES[self.type]


DEFECTS: Registry[DefectDesign] = Registry("defect type")

_WRONG_WORDS = ("Lorem ipsum", "Cancel", "Delete all", "Untitled", "Button", "TODO: label", "Loading…", "Error 404")
_OVERLAY_WORDS = ("New!", "Limited offer", "Label", "Tooltip", "Notice", "Beta")
_OVERLAY_COLOURS = ("#ffe08a", "#b8f2e6", "#ffc6d9", "#d0c8ff")
_OFF_PALETTE = (("#e4007c", "#ffffff"), ("#7fff00", "#111111"), ("#ff6f00", "#ffffff"), ("#00e5ff", "#111111"))


def _add(design: DefectDesign) -> None:
    if design.type not in DEFECT_TYPES:
        raise DefectError(f"defect {design.type!r} is not a type of cua.DEFECT_TAXONOMY (add its row there first)")
    DEFECTS.add(design.type, design)


def _signed(random_: random.Random, low: int, high: int) -> int:
    return random_.randint(low, high) * random_.choice((-1, 1))


# ---- display -------------------------------------------------------------------------------------
def _drawn_text(selector: str, params: dict[str, Any]) -> str:
    """Words drawn after an element that has none of its own (an icon button): `_defects.js` sets the variable."""
    return f"{selector}::after {{ content: var(--aui-defect-text, none); margin-left: 4px; }}\n"


_add(DefectDesign("content-error", "the element's words (or its label's) replaced by words that do not fit it",
                  ANY_STEP, draw=lambda r: {"text": r.choice(_WRONG_WORDS)}, css=_drawn_text))
_add(DefectDesign("data-format-error", "a number near the element shown in a wrong format (or a value of the wrong "
                  "type: undefined, NaN)", ANY_STEP,
                  draw=lambda r: {"format": r.choice(("noise", "scientific", "nan")),
                                  "fallback": r.choice(("undefined", "NaN", "[object Object]", "null"))},
                  css=_drawn_text))
_add(DefectDesign("element-missing", "the element is not drawn (it is still there and works)", ANY_STEP,
                  css=lambda s, p: f"{s} {{ opacity: 0 !important; }}\n"))
_add(DefectDesign("elements-overlapping", "another element is drawn over part of it (the pointer passes through)",
                  ANY_STEP, draw=lambda r: {"text": r.choice(_OVERLAY_WORDS), "background": r.choice(_OVERLAY_COLOURS),
                                            "dx": r.choice((0.3, 0.4, 0.5)), "dy": r.choice((0.2, 0.35, 0.5))}))
_add(DefectDesign("misalignment", "the element shifted off the line of its neighbours", ANY_STEP,
                  draw=lambda r: {"dx": _signed(r, 9, 18), "dy": _signed(r, 5, 10)},
                  css=lambda s, p: f"{s} {{ translate: {p['dx']}px {p['dy']}px !important; }}\n"))
_add(DefectDesign("uneven-spacing", "extra space before the element, unlike its neighbours", ANY_STEP,
                  draw=lambda r: {"top": r.randint(14, 30), "left": r.randint(18, 36)},
                  css=lambda s, p: f"{s} {{ margin-top: {p['top']}px !important; margin-left: {p['left']}px !important; }}\n"))
_add(DefectDesign("inconsistent-colour", "the element in a colour off the app's palette", ANY_STEP,
                  draw=lambda r: dict(zip(("background", "text"), r.choice(_OFF_PALETTE))),
                  css=lambda s, p: (f"{s} {{ background-color: {p['background']} !important; color: {p['text']} !important; "
                                    f"border-color: {p['background']} !important; accent-color: {p['background']} !important; }}\n")))
_add(DefectDesign("inconsistent-size", "the element drawn larger or smaller than its kind", ANY_STEP,
                  draw=lambda r: {"zoom": r.choice((1.45, 1.6, 0.7))},
                  css=lambda s, p: f"{s} {{ zoom: {p['zoom']} !important; }}\n"))
_add(DefectDesign("abnormal-state", "the element looks disabled while it works", ANY_STEP,
                  css=lambda s, p: (f"{s} {{ opacity: 0.35 !important; filter: grayscale(1) !important; "
                                    "cursor: not-allowed !important; }\n")))

# ---- interaction ---------------------------------------------------------------------------------
_add(DefectDesign("no-response", "using the element does nothing (its events never reach the app)",
                  POINTER_STEPS | {"select"}))
_add(DefectDesign("input-keyboard", "the field refuses typing, or drops keys", frozenset({"fill", "press"}),
                  draw=lambda r: {"mode": r.choice(("refuse", "drop"))}))
_add(DefectDesign("navigation-error", "the control leads where another control of its kind leads", frozenset({"click"}),
                  draw=lambda r: {"pick": r.randint(0, 3)}))
_add(DefectDesign("unexpected-result", "the operation lands on the wrong thing: a click counted twice, the next option, "
                  "a typed number's first digit changed", frozenset({"click", "check", "select", "fill"}),
                  applies=lambda step: step.action != "fill" or any(c.isdigit() for c in step.value or "")))


def defect_types() -> list[str]:
    """Every implemented defect type, in the taxonomy's order (display first)."""
    return [name for name in DEFECT_TYPES if name in DEFECTS.names()]


def defect_design(defect_type: str) -> DefectDesign:
    """The catalogue's design of `defect_type`.

    Raises:
        DefectError: not an implemented type (the known ones are listed).
    """
    try:
        return DEFECTS.get(defect_type)
    except UnknownNameError:
        raise DefectError(f"unknown defect type {defect_type!r}; known: {', '.join(defect_types())}") from None


def derived_seed(seed: int, *parts: str) -> int:
    """A 32-bit seed from `seed` and what it is for (so one seed draws differently per app, task and type)."""
    digest = hashlib.sha256(":".join([str(int(seed)), *parts]).encode("utf-8")).digest()
    return int.from_bytes(digest[:4], "big")


class DefectSpec(BaseModel):
    """One defect bound to one element: what `defect_transform` serves (all of it is recorded)."""

    model_config = ConfigDict(frozen=True)

    type: str = Field(description="A defect type of `cua.DEFECT_TYPES` that this catalogue implements.")
    selector: str = Field(description="The CSS selector of the bound element (a reference solution step's).")
    seed: int = 0
    params: dict[str, Any] = Field(default_factory=dict, description="Its seeded choices (`draw_params`).")

    @field_validator("type")
    @classmethod
    def _known(cls, value: str) -> str:
        defect_design(value)
        return value

    @property
    def kind(self) -> DefectKind:
        return DEFECT_TYPES[self.type]

    @property
    def name(self) -> str:
        """The transform's recorded name: `defect:<type>@<selector>@seed=<seed>`."""
        return f"{DEFECT_PREFIX}{self.type}@{self.selector}@seed={int(self.seed)}"


def draw_params(defect_type: str, seed: int) -> dict[str, Any]:
    """The seeded choices of a defect of `defect_type` (the same for the same seed, on every machine)."""
    return defect_design(defect_type).draw(random.Random(seed))


def make_defect(defect_type: str, selector: str, seed: int = 0) -> DefectSpec:
    """A defect of `defect_type` bound to the first element matching `selector`, its choices drawn from `seed`."""
    return DefectSpec(type=defect_type, selector=selector, seed=seed, params=draw_params(defect_type, seed))


def defect_transform(spec: DefectSpec) -> PageTransform:
    """The serve-time transform of one defect: its CSS on the bound element's marker and `_defects.js`."""
    design = defect_design(spec.type)
    return PageTransform(name=spec.name, style=design.css(_marked(spec.type), spec.params), script=_DEFECTS_JS,
                         args=[{"type": spec.type, "selector": spec.selector, "seed": int(spec.seed),
                                "params": spec.params}, INJECTED_ATTRIBUTE])


def binds_to(defect_type: str, step: SolutionStep) -> bool:
    """Whether a defect of `defect_type` can be bound to the element of solution step `step`."""
    design = defect_design(defect_type)
    return step.action in design.binds_to and design.applies(step)
