"""From one clause and the page as it is now to an ordered list of goals (`_goal`).

Forms (fields, drop-downs, sliders and the button that submits them), named choices (tabs,
chips, options) and the action button live here; goals about existing rows, switches and
toggles in `_rows`. Goals are recomputed from the live page at every step (a form that
appears after "New task" is seen at once); their ids are stable so the policy remembers which
ones it has already done.
"""

from __future__ import annotations

from dataclasses import replace
from os.path import commonprefix

from ._goal import (
    ENTERING,
    MAX_FORM_LEVELS,
    MIN_CLICK_SCORE,
    MIN_CONTEXT_SCORE,
    MIN_FIELD_SCORE,
    MIN_TARGET_PX,
    Goal,
)
from ._match import (
    CLICK_KINDS,
    FIELD_KINDS,
    click_score,
    context_score,
    exact_name_match,
    field_score,
    mention_position,
    names_action,
    option_score,
    own_words,
)
from ._page import Element, PageView
from ._rows import row_goals, switch_goals, toggle_goals
from ._task import BUTTON_VERBS, SUBMIT_INTENTS, Clause, Value
from ._text import concept_set, content_words, mentions_phrase, normalize


def _appears(text: str, view: PageView) -> bool:
    target = normalize(text)
    if not target:
        return False
    return any(target in (normalize(element.name), normalize(element.before)) or mentions_phrase(element.row, text)
               for element in view.elements) or any(normalize(label.text) == target for label in view.labels)


def split_values(clause: Clause, view: PageView, inherited: list[str]) -> tuple[list[Value], list[str]]:
    """(values to enter, names of existing things the clause refers to)."""
    to_enter: list[Value] = []
    if clause.verb in ENTERING and not any(v.quoted for v in clause.values):
        # "Eve is joining us — add her": a capitalised name the page does not show yet is the text.
        new_names = [n for n in clause.names if not _appears(n, view)]
        clause_values = tuple(Value(text=n, quoted=True, proper=True) for n in new_names[:1]) + clause.values
    else:
        clause_values = clause.values
    references = list(inherited) if clause.pronoun else []
    if clause.verb not in ENTERING:
        # "Remove the Backpack from the list": a capitalised name the page shows is a thing to find.
        references += [n for n in clause.names if _appears(n, view)]
    for value in clause_values:
        if value.quoted and value.reference:
            references.append(value.text)
        elif value.quoted and clause.verb not in ENTERING and _appears(value.text, view):
            references.append(value.text)
        else:
            to_enter.append(value)
    return to_enter, references


def plan_clause(clause: Clause, view: PageView, inherited: list[str]) -> list[Goal]:
    """The goals for `clause` on the page as it is now, in the order to pursue them."""
    values, references = split_values(clause, view, inherited)
    usable = [e for e in view.elements if not e.disabled and _big_enough(e)]
    used: set[str] = set()
    if clause.verb == "add":
        # "Add the talk 'Designing for Agents' to my agenda": the thing is already listed, so
        # adding it is done from its row (a star, a "+"), not by typing its name again.
        typed = {normalize(e.value) for e in usable if e.kind in FIELD_KINDS and e.value}
        # A value sitting in a field is being entered (by us, a step ago), not listed.
        listed = [v.text for v in values if v.quoted and not v.proper and normalize(v.text) not in typed
                  and any(mentions_phrase(e.row, v.text) for e in usable)]
        in_row = row_goals(clause, usable, view, listed, set()) if listed else []
        if in_row:
            return in_row

    chips = _mentioned_choices(clause, usable, used)
    buttons = _button_candidates(clause, usable, references, used)
    # The submit button and the fields around it make one form: choose them together, so
    # "Log 'Dinner' for 80" fills the expense form and presses its own "Add expense".
    best: tuple[float, Element | None, list[Goal], bool, set[str]] | None = None
    for button_score, button in [(0.0, None)] + buttons[:4]:
        trial_used = set(used)
        value_goals, missing_field, fit = _value_goals(clause, values, usable, references, trial_used, button)
        total = fit + button_score
        if best is None or total > best[0] + 1e-9:
            best = (total, button, value_goals, missing_field, trial_used)
    _, button, value_goals, missing_field, used = best
    if button is None and buttons:
        button = buttons[0][1]
    toggles = toggle_goals(clause, usable, references, used)
    # A clause filling a form is about the form, not about a list row that shares its words.
    # A button whose name says the action beats a row that merely shares a word with the task.
    weak_rows = bool(buttons) and not references
    cells = row_goals(clause, usable, view, references, used, allow_word_rows=not weak_rows) if not toggles and not value_goals else []
    goals = chips + value_goals + toggles + cells

    goals += switch_goals(clause, usable, used)
    fills = [g for g in value_goals if g.kind == "fill"]
    # "Try the promo code 'FREE100'": a value typed with no other instruction is meant to be used.
    bare_entry = clause.verb in (None, "click") and fills and len(goals) == len(value_goals)
    # "Load the 'Four on the floor' pattern" with no such thing in sight: pressing a mere "Load"
    # would load something else. Only a button naming the thing will do.
    unseen = [v.text for v in values if v.quoted and clause.verb not in ENTERING | {"set", "type"}
              and not any(g.text == v.text or exact_name_match(v.text, g.element) for g in goals)]
    if button is not None and unseen and not any(mentions_phrase(button.name, text) for text in unseen):
        button = None
    if bare_entry or _needs_button(clause, goals):
        if button is None and (clause.submits or bare_entry) and fills:
            button = _submit_beside(fills[-1].element, usable, used)
        if button is not None and button.key not in used:
            if missing_field:
                # The fields to fill are not on screen yet: this button probably opens the form.
                return [Goal(id="open", kind="click", element=button, reason="it should open the form to fill")] + goals
            reason = f"its name '{button.name[:40]}' matches the action"
            if clause.every:
                # "Settle all the debts": every button of that name, one per row.
                twins = [e for e in usable if normalize(e.name) == normalize(button.name) and e.kind in CLICK_KINDS]
                goals += [Goal(id=f"commit:{normalize(e.row) or e.key}", kind="click", element=e, reason=reason) for e in twins]
            else:
                goals.append(Goal(id="commit", kind="click", element=button, reason=reason))
        elif fills and (clause.submits or bare_entry) and fills[-1].element.tag != "textarea":
            # No button to press: Enter in the last field submits, once everything else is set.
            last = fills[-1]
            goals.remove(last)
            goals.append(replace(last, submit=True, reason=last.reason + "; no button, so Enter submits"))
    return goals


_SUBMIT_WORDS = concept_set(content_words("submit apply ok go add save search send confirm enter create register sign continue done"))


def _submit_beside(field: Element, elements: list[Element], used: set[str]) -> Element | None:
    """The submit-like button right next to a field ("Promo code [____] [Apply]")."""
    def distance(e: Element) -> float:
        return ((e.box.center_x - field.box.center_x) ** 2 + (e.box.center_y - field.box.center_y) ** 2) ** 0.5

    best = min((e for e in elements if e.key not in used and e.kind in ("button", "link", "clickable")
                and concept_set(own_words(e)) & _SUBMIT_WORDS), key=distance, default=None)
    return best if best is not None and distance(best) < 320.0 else None


def _big_enough(element: Element) -> bool:
    # A slider's track may be a hairline; its thumb is what one grabs.
    size = element.box.width if element.kind == "range" else min(element.box.width, element.box.height)
    return size >= MIN_TARGET_PX


def _needs_button(clause: Clause, goals: list[Goal]) -> bool:
    verb = clause.verb or "click"
    if verb in ("set", "type", "uncheck", "on", "off", "toggle", "check", "select", "open", "click", "delete"):
        return not goals
    return verb in SUBMIT_INTENTS or verb in BUTTON_VERBS or not goals


def _button_candidates(clause: Clause, elements: list[Element], references: list[str], used: set[str]) -> list[tuple[float, Element]]:
    """Buttons whose name says what the clause wants done, best first."""
    found = []
    for element in elements:
        if element.key in used or element.kind not in CLICK_KINDS or element.kind in ("checkbox", "radio"):
            continue  # tick boxes are states, handled as toggles
        if not names_action(clause, element):
            continue
        score = click_score(clause, element)
        if element.state is not None and not any(v.quoted and exact_name_match(v.text, element) for v in clause.values):
            score -= 2.0  # a lit chip or tab is a choice, not the button that does the action
        if references and element.row and any(mentions_phrase(element.row, r) for r in references):
            score += 1.0
        if score >= MIN_CLICK_SCORE:
            found.append((score, element))
    found.sort(key=lambda item: -item[0])
    return found


def _mentioned_choices(clause: Clause, elements: list[Element], used: set[str]) -> list[Goal]:
    """Tabs, chips, segmented buttons and drop-down options the clause names ("a short break")."""
    goals = []
    # Drop-downs offering the same options ("From unit", "To unit") take the named options in
    # the order the task names them: "convert 5 miles to kilometres".
    by_options: dict[tuple[str, ...], list[Element]] = {}
    for element in elements:
        if element.kind == "select" and element.options:
            by_options.setdefault(tuple(normalize(o.text) for o in element.options), []).append(element)
    for selects in by_options.values():
        texts = [o.text for o in selects[0].options]
        mentioned = []
        for option in selects[0].options:
            name = normalize(option.text)
            if len(name) < 2 or name.isdigit() or name in ("all", "none", "other"):
                continue
            found = mention_position(option.text, clause.text, texts)
            if found is not None:
                mentioned.append((found[0], -found[1], option.text))
        mentioned.sort()
        if len(selects) == 1 and mentioned:
            mentioned = [min(mentioned, key=lambda m: (m[1], m[0]))]  # the most specific mention
        for element, (_, _, text) in zip(selects, mentioned):
            used.add(element.key)
            option = next(o for o in element.options if o.text == text)
            if not option.selected:
                goals.append(Goal(id=f"choose:{element.key}:{text}", kind="choose", element=element, text=text,
                                  reason=f"the task names the option '{text}'"))
    stateful_groups = {e.group for e in elements if e.state is not None and e.kind != "checkbox"}
    for element in elements:
        chip = _is_chip(element) or (element.group in stateful_groups and element.kind in ("clickable", "button"))
        if element.kind == "select" or not chip or len(normalize(element.name)) < 3:
            continue
        # A card's title names it: "Student" for "Student / €120 / Valid student ID".
        title = element.first_line if normalize(element.first_line) != normalize(element.name) else ""
        named = mentions_phrase(clause.text, element.name) or (len(title) >= 3 and mentions_phrase(clause.text, title))
        if named and normalize(element.name) not in (clause.verb or ""):
            used.add(element.key)
            if element.state is not True:
                goals.append(Goal(id=f"chip:{element.key}", kind="click", element=element, reason=f"the task names '{element.name}'"))
    if clause.only:
        # "only between Chloe and Dev": the other choices of the same group go off.
        groups = {e.group for e in elements if e.key in used and _is_chip(e)}
        for element in elements:
            if element.group in groups and _is_chip(element) and element.key not in used and element.state is True:
                used.add(element.key)
                goals.append(Goal(id=f"chip-off:{element.key}", kind="click", element=element,
                                  reason=f"only the named choices should stay on, not '{element.name}'"))
    return goals


def _is_chip(element: Element) -> bool:
    """One of a set of choices (tab, segment, chip): clicking picks it rather than doing something."""
    return element.kind != "checkbox" and (
        element.kind in ("tab", "radio") or element.role in ("tab", "radio", "option") or element.state is not None)


def _shared_depth(a: Element, b: Element) -> int:
    """How many levels of the page's structure two elements share (their paths' common prefix)."""
    return len(commonprefix([a.key.split("/"), b.key.split("/")]))  # element-wise on lists, not only strings


def _form_depth(anchor: Element | None, elements: list[Element]) -> int:
    """Depth of the anchor button's form: its nearest ancestor that holds any input."""
    if anchor is None:
        return 0
    depth = max((_shared_depth(anchor, e) for e in elements if e.is_input and e.key != anchor.key), default=0)
    # A form is a few levels around its button; a nav link "shares" only <body> with the fields.
    return depth if depth >= max(2, len(anchor.key.split("/")) - MAX_FORM_LEVELS) else 0


def _near(anchor: Element | None, element: Element, form_depth: int) -> float:
    """Fields inside the button's own form belong with it (+2); a field outside it does not (−1).

    Structure, not pixels: on screen a neighbouring card's field can be nearer than the form's own.
    """
    if anchor is None or form_depth == 0:
        return 0.0
    return 2.0 if _shared_depth(anchor, element) >= form_depth else -1.0


def _value_goals(clause: Clause, values: list[Value], elements: list[Element], references: list[str], used: set[str],
                 anchor: Element | None = None) -> tuple[list[Goal], bool, float]:
    """Goals putting each value somewhere, whether some text had no field to go into, and the fit."""
    options: list[tuple[float, int, Element, str]] = []
    form_depth = _form_depth(anchor, elements)
    for index, value in enumerate(values):
        number = value.number if not value.quoted else None  # a quoted value is matched as text
        for element in elements:
            if element.key in used or (anchor is not None and element.key == anchor.key):
                continue
            if element.kind in FIELD_KINDS or element.kind == "range":
                score = field_score(value, element, clause, references)
                if clause.verb not in ENTERING | {"set", "type", None, "click", "open"} and score < MIN_CONTEXT_SCORE:
                    continue  # "I read my 20 pages, tick it off": a value that only describes
                if clause.verb == "set" and references and score < 4.0:
                    continue  # "rename 'Read 5 pages' to …": only a field showing that thing will do
                if score >= MIN_FIELD_SCORE or (score > 0 and value.quoted):
                    options.append((score + _near(anchor, element, form_depth), index, element, "field"))
            elif value.extreme:
                continue  # "as many as allowed" is a slider's end, not an option called "Max"
            elif element.kind == "select":
                best = max((option_score(value.text, o.text, number) for o in element.options), default=0.0)
                if best > 0:
                    context = context_score(value, own_words(element) + content_words(element.before))
                    options.append((best + context + _near(anchor, element, form_depth), index, element, "select"))
            elif element.kind in CLICK_KINDS and clause.verb not in ("add", "type"):
                score = option_score(value.text, element.name, number)
                if score >= 3.0:
                    if value.unit and concept_set([value.unit]) & concept_set(content_words(element.name)):
                        score += 1.5  # "30 years" and a "30 yr" chip
                    options.append((score - 0.5, index, element, "chip"))
    options.sort(key=lambda item: (-item[0], item[1]))
    chosen: dict[int, tuple[Element, str]] = {}
    fit = 0.0
    for score, index, element, how in options:
        if index in chosen or element.key in used:
            continue
        chosen[index] = (element, how)
        used.add(element.key)
        fit += score
    goals, missing = [], False
    for index, value in enumerate(values):
        if index not in chosen:
            missing = missing or (value.quoted and clause.verb in ENTERING | {"set"})
            continue
        element, how = chosen[index]
        label = element.describe()
        if how == "field" and element.kind == "range":
            if value.extreme or (value.number is not None and not _slider_at(element, value)):
                goals.append(Goal(id=f"slide#{index}:{value.text}", kind="slide", element=element, number=value.number,
                                  extreme=value.extreme, reason=f"{label} takes {value.text}"))
        elif how == "field":
            goals.append(Goal(id=f"fill#{index}:{value.text}", kind="fill", element=element, text=value.text,
                              reason=f"the {label} fits {value.text!r}"))
        elif how == "select":
            number = value.number if not value.quoted else None
            option = max(element.options, key=lambda o: option_score(value.text, o.text, number))
            if not option.selected:
                goals.append(Goal(id=f"choose#{index}:{option.text}", kind="choose", element=element, text=option.text,
                                  reason=f"{label} has the option '{option.text}'"))
        elif element.state is not True:
            goals.append(Goal(id=f"chip:{element.key}", kind="click", element=element, reason=f"it is labelled {value.text!r}"))
    return goals, missing, fit


def _slider_at(element: Element, value: Value) -> bool:
    try:
        return abs(float(element.value) - float(value.number)) < 1e-9
    except (TypeError, ValueError):
        return False


