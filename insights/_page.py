"""Page-wide changes, decided on the loaded page: the computed style of the elements the tasks acted on.

Naming by id or class never sees a rule that selects every element (`*`, the offline coder's no-motion
sheet), every button (`button, [role=button]`, its 44 px targets) or the page itself (`body {margin}`).
So such a change is decided where it acts: the computed style of the elements the revision's tasks
acted on (trajectory targets, either version), and of any element its triggers or details name, read
on both versions as loaded (`Renderer`). It is applied when one of them changed accordingly — for
motion (animation, transition), when the element moved for less time after than before (a duration
under 1 ms is no motion: the no-motion sheet leaves 0.001 ms so `transitionend` still fires); for any
other property it sets, when the value differs. Looked for and not seen: not applied. No element to
look at on both versions: unverifiable.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable
from contextlib import suppress
from pathlib import Path
from typing import Literal

from bs4 import Tag

from coder import INJECTED_MARK, TRANSFORMS, principle_of
from results import PAGE_WIDE, ChangeStatus, TaskOutcome

from ._dom import Version, css_rules, names_id_or_class

MOTION = ("animation-name", "animation-duration", "animation-delay", "animation-iteration-count",
          "transition-property", "transition-duration", "transition-delay")
SIZE = ("width", "height", "min-width", "min-height")
SPACING = ("margin-top", "margin-right", "margin-bottom", "margin-left", "padding-top", "padding-right",
           "padding-bottom", "padding-left", "row-gap", "column-gap")
COLOUR = ("color", "background-color", "opacity")
STYLE_PROPERTIES = (*MOTION, "scroll-behavior", *SIZE, "max-width", "max-height", *SPACING, *COLOUR, "visibility",
                    "display", "font-size")
"""The computed properties read for each element a page-wide change is checked on."""

Direction = Literal["less", "more", "any"]
Check = tuple[tuple[str, ...], Direction]
"""Properties a change sets, and how their computed values must move for it to count: less (motion: for less time;
lengths: smaller), more (lengths: larger) or any (a different value)."""
_SHORTHANDS = {"margin": SPACING[:4], "padding": SPACING[4:8], "gap": SPACING[8:], "animation": MOTION[:4],
               "transition": MOTION[4:], "background": ("background-color",)}
# What the offline coder's style transforms set, and how: a feedback line naming no element is checked for what the
# transforms its words call for would set (`coder.TRANSFORMS`' keywords); the others (ids, status logs, slider
# companions, handlers) change markup or behaviour, not a style the page shows.
_STYLE_TRANSFORMS: dict[str, Check] = {
    "remove_animations": (MOTION, "less"), "enlarge_targets": (SIZE, "more"), "raise_contrast": (COLOUR[::2], "any"),
    "fit_viewport": ((*SPACING[::2], "height", "min-height"), "less")}
_PAGE_EDIT = re.compile(r"^\s*([^{}]+?)\s*\{\s*([\w-]+)\s*:.*->")  # "body {margin: 40px -> 16px}"
_NO_MOTION_S = 0.001


def acted_on(run_dir: Path, outcomes: Iterable[TaskOutcome]) -> list[str]:
    """Selectors of every element the outcomes' trajectories acted on (the element under the pointer, or focused)."""
    found: list[str] = []
    for outcome in outcomes:
        if not outcome.trajectory:
            continue
        try:
            steps = json.loads((run_dir / outcome.trajectory / "trajectory.json").read_text(encoding="utf-8"))["steps"]
        except (OSError, ValueError, KeyError):
            continue
        for step in steps:
            target = step.get("target") or {}
            found += [s for s in (target.get("selector"), f"#{target['id']}" if target.get("id") else None) if s]
    return list(dict.fromkeys(found))


def transform_checks(transform: str, details: list[str], new: Version) -> list[Check]:
    """What an offline transform sets page-wide: the properties of the style sheet it injected when its rules select
    by tag, role or `*` (no id or class), and those of the page-wide rules its details edit (`body {margin: …}`)."""
    checks: list[Check] = []
    sheet = new.soup.find("style", attrs={INJECTED_MARK: transform})  # type: ignore[attr-defined]
    if isinstance(sheet, Tag):
        rules = css_rules(sheet.get_text())
        if rules and not any(names_id_or_class(head) for head, _ in rules):
            declared = {name for _, body in rules for name in _declared(body)}
            direction = _STYLE_TRANSFORMS.get(transform, ((), "any"))[1]
            checks.append((tuple(p for p in STYLE_PROPERTIES if p in declared), direction))
    for detail in details:
        edit = _PAGE_EDIT.match(detail)
        if edit and all(s.strip() in PAGE_WIDE for s in edit.group(1).split(",")):
            checks.append((tuple(p for p in _expanded(edit.group(2)) if p in STYLE_PROPERTIES), "any"))
    return [check for check in checks if check[0]]


def script_only(transform: str, new: Version) -> bool:
    """Whether all a transform left on the page is its own script (no style sheet): what it changes is what the page
    does at run time (a typed value committed on leaving the field), which no DOM diff or computed style shows."""
    soup = new.soup  # type: ignore[attr-defined]
    return soup.find("script", attrs={INJECTED_MARK: transform}) is not None and soup.find(
        "style", attrs={INJECTED_MARK: transform}) is None


def claim_checks(text: str) -> list[Check]:
    """What a feedback line's fix would set: by the style transforms its words call for, or motion when it asks for
    predictable behaviour (that principle's one fix); [] when it asks for no style the page shows."""
    return [_STYLE_TRANSFORMS[t.name] for t in TRANSFORMS if t.name in _STYLE_TRANSFORMS
            and (t.keywords.search(text) or (t.name == "remove_animations" and principle_of(text) == t.principle))]


def on_the_page(old: Version, new: Version, probes: Iterable[str],
                checks: list[Check]) -> tuple[ChangeStatus, list[str], str]:
    """(verdict, the elements it changed, how) for a change that sets `checks`, on the elements `probes` select."""
    compared = [p for p in dict.fromkeys(probes) if p != "*" and p in old.styles and p in new.styles]
    changed = [p for p in compared if style_changed(old.styles[p], new.styles[p], checks)]
    names = [p for properties, _ in checks for p in properties]
    what = ", ".join(dict.fromkeys("motion" if p in MOTION else p for p in names))
    if changed:
        return "applied", changed, (f"on the loaded page, the style it sets ({what}) changed on {len(changed)} of "
                                    f"{len(compared)} element(s) checked: {', '.join(changed[:3])}")
    if compared:
        return "not applied", [], (f"on the loaded page, the style it sets ({what}) is as before on all "
                                   f"{len(compared)} element(s) checked")
    return "unverifiable", [], "page-wide, and no element the tasks acted on is on both versions: the page cannot tell"


def style_changed(before: dict, after: dict, checks: list[Check]) -> bool:
    """Whether an element's computed style moved as one of `checks` says: less motion (animation, transition: see
    `motion_seconds`), a length smaller or larger, or another value."""
    for properties, direction in checks:
        if any(p in MOTION for p in properties) and motion_seconds(after) < motion_seconds(before):
            return True
        for name in (p for p in properties if p not in MOTION):
            old, new = before.get(name), after.get(name)
            if old == new:
                continue
            if direction == "any":
                return True
            old_px, new_px = _px(old), _px(new)
            if old_px is None or new_px is None or (new_px < old_px) == (direction == "less"):
                return True  # a value that is no length (`smooth` → `auto`) has no direction to check
    return False


def motion_seconds(style: dict) -> float:
    """How long an element moves by its computed style: its longest animation (delay and repeats included; infinite
    ones forever) or transition; durations under 1 ms count as none."""
    longest = 0.0
    for kind, named in (("animation", "animation-name"), ("transition", "transition-property")):
        durations, delays = _seconds(style.get(f"{kind}-duration")), _seconds(style.get(f"{kind}-delay"))
        counts = [_count(c) for c in _list(style.get(f"{kind}-iteration-count"))]  # a transition runs once
        for n, name in enumerate(_list(style.get(named))):
            duration = _nth(durations, n)
            if name != "none" and duration:
                longest = max(longest, _nth(delays, n) + duration * (_nth(counts, n) or 1))
    return longest


def _px(value: str | None) -> float | None:
    """A computed length in px; `auto`/`none` (no minimum, no maximum) as 0."""
    if value in ("auto", "none", "normal"):
        return 0.0
    match = re.fullmatch(r"(-?[\d.]+)px", value or "")
    return float(match.group(1)) if match else None


def _list(value: str | None) -> list[str]:
    return [part.strip() for part in (value or "").split(",") if part.strip()]


def _count(value: str) -> float:
    with suppress(ValueError):
        return math.inf if value == "infinite" else float(value)
    return 1.0


def _seconds(value: str | None) -> list[float]:
    found = []
    for part in _list(value):
        seconds = 0.0
        with suppress(ValueError):
            seconds = float(part[:-2]) / 1000 if part.endswith("ms") else float(part.rstrip("s"))
        found.append(seconds if abs(seconds) >= _NO_MOTION_S else 0.0)
    return found


def _nth(values: list[float], n: int) -> float:
    """CSS repeats a shorter list of animation or transition values to the length of the names."""
    return max(values[n % len(values)], 0.0) if values else 0.0


def _declared(declarations: str) -> list[str]:
    return [p for part in declarations.split(";") if ":" in part for p in _expanded(part.split(":", 1)[0].strip())]


def _expanded(name: str) -> tuple[str, ...]:
    name = name.lower()
    return _SHORTHANDS.get(name, (name,))
