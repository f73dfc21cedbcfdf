"""Which offline transforms a revision request calls for, and why.

Each transform answers to one of the four agent-centric principles and to a set of measured
fact kinds and keywords. A feedback line or fact selects the transforms whose kind or keywords
it matches, and the principle a line names selects that principle's default transforms.
No feedback selects nothing: the offline coder never rewrites an app unprompted. The style block
selects everything, when it is asked for explicitly or when it is the mode's default
(`style_block_default`) and the request has something to fix (`RevisionRequest.has_inputs`), as
the LLM coder's prompt does.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from bs4 import BeautifulSoup, Tag

from cua import Viewport

from ._css_transforms import enlarge_targets, fit_viewport, raise_contrast, remove_animations, reveal_hover
from ._document import AppDocument, TransformOutcome
from ._dom_transforms import add_ids, commit_typed_values, persistent_status, slider_companions
from ._models import RevisionRequest


STATE_VISIBILITY = "state visibility"
INTERACTION_ROBUSTNESS = "interaction robustness"
INPUT_PERMISSIVENESS = "input permissiveness"
PREDICTABLE_BEHAVIOUR = "predictable behaviour"
PRINCIPLES = (STATE_VISIBILITY, INTERACTION_ROBUSTNESS, INPUT_PERMISSIVENESS, PREDICTABLE_BEHAVIOUR)
"""The paper's agent-centric design principles: every offline transform and commenter change answers to one."""


@dataclass(frozen=True)
class Transform:
    name: str
    principle: str
    apply: Callable[..., TransformOutcome]
    """`apply(document)`, or `apply(document, viewport)` for a transform that `fits_viewport`."""
    fact_kinds: frozenset[str]
    keywords: re.Pattern[str]
    fits_viewport: bool = False
    """It fits the app to the run's viewport, and a line naming the viewport's width calls for it."""

    def run(self, document: AppDocument, viewport: Viewport) -> TransformOutcome:
        return self.apply(document, viewport) if self.fits_viewport else self.apply(document)

    def called_for_by(self, text: str, viewport: Viewport) -> bool:
        """Whether `text` names this transform: one of its keywords, or the viewport's width ("1280x720")."""
        return bool(self.keywords.search(text)) or (self.fits_viewport and str(viewport.width) in text)


def _words(*patterns: str) -> re.Pattern[str]:
    return re.compile("|".join(patterns), re.IGNORECASE)


# Order matters: ids first (later transforms and the next round's checkers can rely on them),
# CSS rewrites before the injected helpers.
TRANSFORMS: tuple[Transform, ...] = (
    Transform("add_ids", INTERACTION_ROBUSTNESS, add_ids,
              frozenset({"missing_id", "unlabeled", "unnamed"}),
              _words(r"\bids?\b", r"identifier", r"\blabel", r"icon[- ]only", r"aria-label", r"unnamed", r"no text")),
    Transform("remove_animations", PREDICTABLE_BEHAVIOUR, remove_animations,
              frozenset({"animation", "motion", "transition"}),
              _words(r"animat", r"transition", r"motion", r"fade", r"flicker", r"moving")),
    Transform("raise_contrast", STATE_VISIBILITY, raise_contrast,
              frozenset({"low_contrast", "contrast"}),
              _words(r"contrast", r"faint", r"\bpale\b", r"legib", r"hard to read", r"hard to see", r"muted")),
    Transform("enlarge_targets", INTERACTION_ROBUSTNESS, enlarge_targets,
              frozenset({"small_target", "tiny_target"}),
              _words(r"\bsmall", r"\btiny", r"\b44\b", r"target size", r"enlarg", r"\blarger\b", r"\bbigger\b",
                     r"hit area", r"click target")),
    Transform("reveal_hover", STATE_VISIBILITY, reveal_hover,
              frozenset({"hover_only", "hidden", "hidden_control", "no_effect", "obscured"}),
              _words(r"hover", r"drop-?down", r"\bmenu", r"tooltip", r"hidden until", r"only (?:appears|shows)",
                     r"reveal", r"invisible")),
    Transform("fit_viewport", INTERACTION_ROBUSTNESS, fit_viewport,
              frozenset({"offscreen", "outside_viewport", "below_fold", "overflow", "obscured"}),
              _words(r"off-?screen", r"below the fold", r"outside (?:the )?viewport", r"\bviewport",
                     r"scroll", r"fit (?:with)?in", r"without scrolling", r"out of view"), fits_viewport=True),
    Transform("slider_companions", INPUT_PERMISSIVENESS, slider_companions,
              frozenset({"slider_only", "range_only"}),
              _words(r"slider", r"range input", r"\brange\b", r"number input", r"step button", r"\bdrag")),
    Transform("commit_typed_values", INPUT_PERMISSIVENESS, commit_typed_values,
              frozenset({"no_effect", "enter_only"}),
              _words(r"\benter\b", r"\bapply\b", r"\bcommit", r"typed value", r"takes? effect", r"without (?:a|the) button")),
    Transform("persistent_status", STATE_VISIBILITY, persistent_status,
              frozenset({"transient_status", "toast", "no_feedback", "no_effect"}),
              _words(r"toast", r"transient", r"disappear", r"vanish", r"status", r"confirmation", r"aria-live",
                     r"feedback message", r"no feedback", r"message")),
)

BY_NAME = {t.name: t for t in TRANSFORMS}

PRINCIPLE_DEFAULTS = {
    STATE_VISIBILITY: ("reveal_hover", "persistent_status"),
    # Resizing and re-spacing change the layout, so they need their own evidence (a small target,
    # an off-screen control) rather than a principle named in passing.
    INTERACTION_ROBUSTNESS: ("add_ids",),
    INPUT_PERMISSIVENESS: ("slider_companions", "commit_typed_values"),
    PREDICTABLE_BEHAVIOUR: ("remove_animations",),
}
_PRINCIPLES = {
    STATE_VISIBILITY: _words(r"state visibility", r"visibility of state"),
    INTERACTION_ROBUSTNESS: _words(r"interaction robustness", r"robust"),
    INPUT_PERMISSIVENESS: _words(r"input permissiveness", r"permissive"),
    PREDICTABLE_BEHAVIOUR: _words(r"predictab"),
}


def principle_of(text: str) -> str | None:
    """The principle a feedback line names (`… — state visibility.`), None when it names none."""
    return next((principle for principle, pattern in _PRINCIPLES.items() if pattern.search(text)), None)


def plan_transforms(request: RevisionRequest) -> dict[str, list[str]]:
    """Transform name -> the feedback lines, facts and reasons that called for it, in `TRANSFORMS` order.

    A transform the request omits (`omit_transforms`, or its principle in `omit_principles`: an ablation) is
    never planned, whatever calls for it."""
    reasons: dict[str, list[str]] = {}
    elements_call_for = _element_transforms(request.html)

    def want(name: str, why: str) -> None:
        reasons.setdefault(name, [])
        if why not in reasons[name] and len(reasons[name]) < 12:
            reasons[name].append(why)

    if request.resolved_style_block() and request.needs_revision():
        for transform in TRANSFORMS:
            want(transform.name, "style block")
    for item in request.active_feedback():
        for fact in item.facts:
            label = f"fact {fact.kind}" + (f" at {fact.selector}" if fact.selector else "")
            for transform in TRANSFORMS:
                if fact.kind.lower() in transform.fact_kinds:
                    want(transform.name, label)
            for name in elements_call_for(f"`{fact.selector}`" if fact.selector else ""):
                want(name, label)
        for line in [*item.actionable_changes, *item.issues]:
            # Keywords pick the specific fix; the principle a line names also picks that principle's
            # default fixes. Each transform only acts where the page gives it something to do (hover
            # rules, sliders, Enter handlers...), so a broad pick is safe.
            called = [t.name for t in TRANSFORMS if t.called_for_by(line, request.viewport)]
            called += [name for principle, pattern in _PRINCIPLES.items() if pattern.search(line)
                       for name in PRINCIPLE_DEFAULTS[principle]]
            for name in [*called, *elements_call_for(line)]:
                want(name, line)
        if item.fit_within_screen:
            want("fit_viewport", "fit_within_screen")
    for task in request.active_unsupported():
        text = f"{task.reason} {task.description}"
        for transform in TRANSFORMS:
            if transform.called_for_by(task.reason or "", request.viewport):
                want(transform.name, f"unsupported {task.task_id}: {task.reason[:80]}")
        # A task the verifier could not write a checker for often lacks an element to name.
        if re.search(r"\bids?\b|selector|element", text, re.IGNORECASE):
            want("add_ids", f"unsupported {task.task_id}")
    return {t.name: reasons[t.name] for t in TRANSFORMS if t.name in reasons and not request.omits(t.name, t.principle)}


_SELECTOR_IN_TEXT = re.compile(r"`([^`]+)`|(#[A-Za-z_][\w-]*)")


def _element_transforms(html: str) -> Callable[[str], list[str]]:
    """What the elements a feedback line names are, in the current HTML: a line about `#dial`
    that is a range input calls for slider companions whatever words it uses."""
    soup: BeautifulSoup | None = None  # parsed only when a line names an element

    def select(selector: str) -> Tag | None:
        nonlocal soup
        if soup is None:
            soup = BeautifulSoup(html, "html.parser")
        try:
            return soup.select_one(selector)
        except Exception:  # soupsieve rejects selectors it cannot parse; the line still counts by words
            return None

    def transforms_for(line: str) -> list[str]:
        names: list[str] = []
        for match in _SELECTOR_IN_TEXT.finditer(line):
            element = select(match.group(1) or match.group(2))
            if element is None:
                continue
            if element.name == "input" and (element.get("type") or "").lower() == "range":
                names.append("slider_companions")
            interactive = element.name in ("button", "a") or element.get("role") == "button"
            if interactive and not element.get_text(strip=True) and not element.get("aria-label") and not element.get("title"):
                names.append("add_ids")
        return names

    return transforms_for
