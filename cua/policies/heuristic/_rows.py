"""Goals about things already on the page: toggles, two-sided switches, list rows and grid cells.

"Mute the hi-hat track", "tick Wednesday for 'Read 20 pages'", "delete 'Floss'", "switch the
pricing to yearly": the task names an existing thing (a row, a column, a switch's side) and the
goal is the control inside or beside it.
"""

from __future__ import annotations

import re

from ._goal import MIN_CLICK_SCORE, ROW_VERBS, TOGGLING, Goal
from ._match import (
    CLICK_KINDS,
    click_score,
    column_label,
    column_matches,
    own_words,
    row_matches,
)
from ._page import Element, PageView
from ._task import Clause
from ._text import WEEKDAYS, mentions_phrase, normalize


def toggle_goals(clause: Clause, elements: list[Element], references: list[str], used: set[str]) -> list[Goal]:
    """Tick boxes and switches the clause names, to be put in the state it asks for ("turn on
    auto-start"); every one of them for "every"/"all"."""
    if clause.verb not in TOGGLING:
        return []
    desired = clause.desired
    if clause.verb in ("open", "select") or (clause.verb == "click" and desired is None):
        desired = True
    scored = []
    if references and not any(mentions_phrase(e.row or e.name, r) for e in elements for r in references):
        references = []  # "show its complementary colour": "its" is not a row on the page
    for element in elements:
        switch = element.kind in ("checkbox", "radio") or element.role == "switch"
        if element.key in used or not switch:
            continue
        score = click_score(clause, element)
        if references:
            if not any(mentions_phrase(element.row or element.name, r) for r in references):
                continue
            score += 3.0
        if score >= MIN_CLICK_SCORE:
            scored.append((score, element))
    scored.sort(key=lambda item: -item[0])
    chosen = [e for s, e in scored] if clause.every else [e for s, e in scored[:1]]
    used.update(element.key for element in chosen)
    return [Goal(id=f"toggle:{element.key}", kind="toggle", element=element, desired=desired,
                 reason=f"the {element.describe()} matches the task")
            for element in chosen if desired is None or element.state is not desired]


def switch_goals(clause: Clause, elements: list[Element], used: set[str]) -> list[Goal]:
    """A two-sided switch ("Monthly (o) Yearly") set to the side the clause names."""
    goals = []
    for element in elements:
        if element.key in used or own_words(element) or element.row_key or element.kind not in ("clickable", "button", "checkbox"):
            continue  # (cells of a list row have the row's texts beside them, not two sides)
        left, right = normalize(element.before), normalize(element.after)
        if not re.search("[a-z]", left) or not re.search("[a-z]", right) or len(left) > 20 or len(right) > 20:
            continue
        wants_right, wants_left = mentions_phrase(clause.text, right), mentions_phrase(clause.text, left)
        if wants_right == wants_left:
            continue
        # Where the knob is: a visible on-state, or the side's name among the switch's classes.
        on_right = element.state is True or any(w in element.classes.lower().split() for w in right.split())
        used.add(element.key)
        if wants_right != on_right:
            side = element.after if wants_right else element.before
            goals.append(Goal(id=f"switch:{element.key}", kind="click", element=element,
                              reason=f"the switch between '{element.before}' and '{element.after}' should be on '{side}'"))
    return goals


def row_goals(clause: Clause, elements: list[Element], view: PageView, references: list[str], used: set[str],
              allow_word_rows: bool = True) -> list[Goal]:
    """Controls inside the list item / grid row the task names: "step 7 of the kick", "× on 'Floss'".

    The row is the one showing a referenced name, else the one sharing most of the clause's
    words; numbers and weekdays pick cells by their column header.
    """
    rows: dict[str, float] = {}
    for element in elements:
        if element.row_key and element.row_key not in rows:
            rows[element.row_key] = row_matches(element.row, clause, references)
    specifiers = [v.text for v in clause.values if v.number is not None and not v.quoted] + [w for w in clause.words if w in WEEKDAYS]
    if not rows or max(rows.values()) < (5.0 if references else 1.0):
        return []  # a task naming a thing ("Taxi from airport") only acts inside the row showing it
    if not references and not specifiers and not allow_word_rows:
        return []
    top = max(rows.values())
    in_rows = [e for e in elements if rows.get(e.row_key, 0) == top and e.key not in used and e.kind in CLICK_KINDS]
    desired = clause.desired
    if specifiers and (clause.verb or "click") in ROW_VERBS:
        cells = [(e, column_matches(column_label(e, view), clause)) for e in in_rows if not own_words(e)]
        cells = [(e, hit) for e, hit in cells if hit]
        if cells:  # a grid: the numbers were columns, whatever state the cells are in
            return [Goal(id=f"cell:{element.key}", kind="click", element=element,
                         reason=f"it is the '{hit[0]}' cell of the row '{element.row[:40]}'")
                    for element, hit in cells if not (desired is not None and element.state is desired)]
    blank = [e for e in in_rows if not own_words(e)]
    if clause.every and desired is not None and clause.verb in ROW_VERBS:
        return [Goal(id=f"cell:{e.key}", kind="click", element=e, reason=f"it is lit in the row '{e.row[:40]}'")
                for e in blank if e.state is (not desired)]
    named = [(click_score(clause, e), e) for e in in_rows if own_words(e)]
    named = [(s, e) for s, e in named if s >= MIN_CLICK_SCORE - 1.0]
    if named:
        element = max(named, key=lambda item: item[0])[1]
        chosen = [e for _, e in named if normalize(e.name) == normalize(element.name)] if clause.every else [element]
        return [Goal(id=f"row:{e.row_key or e.key}", kind="click", element=e, reason=f"it is the {e.describe()} of the row '{e.row[:40]}'")
                for e in chosen]
    if clause.verb in ("check", "uncheck") and len(blank) == 1 and blank[0].state is not desired:
        return [Goal(id=f"row:{blank[0].key}", kind="click", element=blank[0], reason=f"it is the tick box of the row '{blank[0].row[:40]}'")]
    unnamed_buttons = [e for e in blank if e.kind == "button"]
    if clause.verb in ("delete", "add", "select", "check", "open") and references and len(unnamed_buttons) == 1:
        # An icon-only button alone in the row the task names: most likely the action asked for.
        element = unnamed_buttons[0]
        return [Goal(id=f"row:{element.key}", kind="click", element=element, reason=f"it is the only (icon) button of the row '{element.row[:40]}'")]
    return []
