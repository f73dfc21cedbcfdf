"""Matching the task's words and values to the page's elements: scores, not rules.

Every function here is pure (task pieces + elements in, numbers out), so it is unit-tested
without a browser. Higher is better; 0 or less means "not this one".
"""

from __future__ import annotations

import re

from ._page import FIELD_KINDS, Element, PageView
from ._task import Clause, Value
from ._text import (
    GENERIC_WORDS,
    STOPWORDS,
    WEEKDAYS,
    abbreviation_match,
    concept_set,
    content_words,
    mentions_phrase,
    normalize,
    split_identifier,
    stem,
    tokens,
)

CLICK_KINDS = frozenset({"button", "link", "tab", "clickable", "checkbox", "radio", "slider-role"})
_EMAIL = re.compile(r"^[^@\s]+@[^@\s]*$")
_URL = re.compile(r"^(https?://|www\.)", re.IGNORECASE)
_HEX = re.compile(r"^#[0-9a-f]{3,8}$", re.IGNORECASE)


def own_words(element: Element) -> list[str]:
    """What the element itself says: label, text, title, placeholder."""
    return content_words(" ".join((element.aria_label, element.label, element.text, element.title, element.placeholder)))


def side_words(element: Element) -> list[str]:
    """Text beside an input that has no label of its own (its visual label, its unit or readout).

    Buttons are named by their own text; labelled inputs by their label.
    """
    if not element.is_input:
        return []
    if element.label or element.aria_label or element.placeholder:
        return content_words(element.after)
    return content_words(f"{element.before} {element.after}")


def _hits(query: tuple[str, ...] | list[str], words: list[str]) -> int:
    target = concept_set(words)
    return sum(1 for word in query if concept_set([word]) & target)


def _coverage(query: list[str], words: list[str]) -> float:
    """Share of `words` (an element's stemmed name) that the query mentions."""
    if not words:
        return 0.0
    query_concepts = concept_set([w for w in query if w])
    return sum(1 for word in words if concept_set([word]) & query_concepts) / len(words)


def is_numeric(value: Value) -> bool:
    return value.number is not None or value.extreme is not None or re.fullmatch(r"-?\d+([.,]\d+)?", value.text.strip()) is not None


def field_score(value: Value, element: Element, clause: Clause, references: list[str] = ()) -> float:
    """How well `element` fits as the place to enter `value` (a text/number field, a slider).

    `references` are names of existing things the task points at ("the target for 'Morning run'"):
    a field labelled by one of them is the one meant.
    """
    if element.disabled or element.kind not in FIELD_KINDS | {"range"}:
        return 0.0
    numeric = is_numeric(value)
    if element.kind in ("number", "range") and not numeric:
        return 0.0
    if element.kind == "range" and value.extreme is None and value.number is None:
        return 0.0
    if value.number is not None and element.kind in ("number", "range") and not _in_bounds(value.number, element):
        return 0.0
    words = own_words(element) + side_words(element)
    ids = content_words(split_identifier(element.id_words))
    score = context_score(value, words)
    score += 0.6 * _hits(value.before + value.after, ids)
    # The clause's other words help a little — not those that describe its other values
    # ("$350,000 home … over 30 years": "year" is the term's, not the price's).
    others = {w for v in clause.values if v is not value for w in v.next_to + v.before + v.after + ((v.unit,) if v.unit else ())}
    free = tuple(w for w in clause.words if w not in others or w in value.before + value.after)
    score += 0.4 * min(_hits(free, words), 3) + 0.3 * min(_hits(free, content_words(element.heading)), 2)
    for reference in references:
        texts = (element.before, element.label, element.aria_label, element.row, element.value)
        if any(mentions_phrase(text, reference) for text in texts):
            score += 4.0
    if element.row:  # a field in a list row the task describes ("3 water bottles": that row's quantity)
        score += 0.5 * min(_hits(free, [w for w in content_words(element.row) if w not in words]), 2)
    unit_text = f"{element.after} {element.label} {element.aria_label} {element.placeholder} {element.title} {element.before}"
    if value.unit and concept_set([value.unit]) & concept_set(content_words(unit_text) + tokens(unit_text)):
        score += 1.5
    for word in value.before[-1:]:  # "set Red to 255" with a slider labelled "R"
        if any(abbreviation_match(word, text) for text in (element.before, element.label, element.aria_label)):
            score += 2.0
    if element.kind == "range" and score == 0 and value.extreme is None:
        return 0.0  # a slider takes a number only when its label, unit or row says it is the one
    text = value.text.strip()
    if value.quoted and not numeric and concept_set([stem("name")]) & concept_set(words):
        score += 1.5 if value.proper else 0.5  # a quoted string is most often the thing's name or title
    if clause.verb and concept_set([stem(clause.verb)]) & concept_set(words):
        score += 0.6  # "Quick add: task title" is the field of an "add"
    if _EMAIL.match(text):
        score += 3.0 if element.type == "email" or "email" in words or "mail" in words else -1.0
    elif _URL.match(text):
        score += 2.0 if element.type == "url" else 0.0
    elif _HEX.match(text) and element.placeholder.startswith("#"):
        score += 3.0
    if element.type == "search" or "search" in words:
        score += 3.0 if clause.verb == "search" else -2.0
    elif clause.verb == "search":
        score -= 0.5
    if numeric:
        holds_number = re.fullmatch(r"-?\d+([.,]\d+)?", element.value.strip()) is not None
        score += {"number": 1.5, "range": 0.6, "text": 1.2 if holds_number else 0.3}[element.kind]
    elif element.kind == "text":
        score += 0.5
    if not element.value and element.kind != "range":
        score += 0.3
    return score + 0.01  # any compatible field beats nothing


def context_score(value: Value, words: list[str]) -> float:
    """How much the words around a value in the task name a control with these words.

    The word right beside the value names it most surely ("10% down", "tempo 120"); then the
    words before it ("set the tempo to 120"); the words after it least.
    """
    score = 2.0 * _hits(value.next_to, words)
    score += 1.5 * _hits(tuple(w for w in value.before if w not in value.next_to), words)
    score += 0.6 * _hits(tuple(w for w in value.after if w not in value.next_to), words)
    return score


def _in_bounds(number: float, element: Element) -> bool:
    return (element.min is None or number >= element.min) and (element.max is None or number <= element.max)


def _says_the_verb(clause: Clause, own: list[str]) -> bool:
    """Do the element's own words say the clause's verb ("Add expense" for "add")? Verbs that only
    point at a thing ("click X", "open X", "select X", "set X", "type X") name no button by themselves."""
    if not clause.verb or clause.verb in ("click", "open", "select", "set", "type"):
        return False
    return bool(concept_set([stem(clause.verb)] + ([clause.verb_word] if clause.verb_word else [])) & concept_set(own))


# Leading words of a button's name that say "this picks or flips X": the X names it.
_SELECTING = frozenset(stem(w) for w in ("choose", "select", "pick", "get", "toggle", "switch"))


def names_action(clause: Clause, element: Element) -> bool:
    """Does the element's own name say what the clause wants done?

    Its words include the verb ("Add expense" for "add"), or every word of its name is in the
    task ("Reset week", "Short break"), or it is exactly a quoted value.
    """
    own = own_words(element) + side_words(element)
    if not own:
        return False
    named = [w for w in own if w not in _SELECTING] or own  # "Choose Business" is named by "Business"
    if _says_the_verb(clause, own):
        return True
    query = list(clause.words) + [stem(clause.verb or ""), clause.verb_word]
    specific = [w for w in named if w not in GENERIC_WORDS]
    if specific and _coverage(query, specific) >= 0.99:
        return True
    title = content_words(element.first_line)
    if title and len(title) < len(own) and _coverage(query, title) >= 0.99:
        return True  # a card or menu item named by its title line
    return any(v.quoted and exact_name_match(v.text, element) for v in clause.values)


def option_score(value_text: str, option_text: str, number: float | None = None) -> float:
    """How well a drop-down option / chip text matches a value the task names."""
    a, b = normalize(value_text), normalize(option_text)
    if not a or not b:
        return 0.0
    if a == b:
        return 6.0
    if number is not None:
        numbers = re.findall(r"-?\d+(?:\.\d+)?", b)
        return 3.5 if len(numbers) == 1 and float(numbers[0]) == number else 0.0
    return 3.0 if len(a) >= 3 and (mentions_phrase(b, a) or mentions_phrase(a, b)) and len(b) >= 2 else 0.0


def click_score(clause: Clause, element: Element) -> float:
    """How well a button/link/tab/clickable matches the clause's verb and object words."""
    if element.disabled or element.kind in FIELD_KINDS or element.kind == "range":
        return 0.0
    own = own_words(element) + side_words(element)
    if element.kind in ("checkbox", "radio"):
        own += content_words(f"{element.before} {element.after}")
    if not own:
        return 0.0
    score = 3.0 if _says_the_verb(clause, own) else 0.0
    score += 1.5 * min(_hits(clause.words, own), 4)
    score += 2.0 * _coverage(list(clause.words), own)  # the verb already counted above
    name = element.name
    for value in clause.values:
        if value.quoted or value.number is not None:
            score += option_score(value.text, name, value.number if not value.quoted else None)
    ids = content_words(split_identifier(element.id_words))
    score += 0.3 * _hits(clause.words, ids)
    if element.kind in ("button", "link", "tab"):
        score += 0.2
    return score


def row_matches(row_text: str, clause: Clause, references: list[str]) -> float:
    """How strongly a repeated container (list item, table row) is the one the task talks about."""
    if not row_text:
        return 0.0
    score = 5.0 * sum(mentions_phrase(row_text, reference) for reference in references)
    words = content_words(row_text)
    score += 1.0 * _hits(tuple(w for w in clause.words if not w.isdigit() and w not in WEEKDAYS), words)
    return score


def column_label(element: Element, view: PageView) -> str:
    """The header text above a grid cell (the nearest short label over its column)."""
    best, best_gap = "", 10_000.0
    for label in view.labels:
        box = label.box
        if box.y + box.height > element.box.y + 1 or abs(box.center_x - element.box.center_x) > max(element.box.width / 2, 4):
            continue
        gap = element.box.y - (box.y + box.height)
        if gap < best_gap and gap < 400:
            best, best_gap = label.text, gap
    return best


def column_matches(label: str, clause: Clause) -> list[str]:
    """Which of the clause's column words/numbers the header names: '7' for "step 7", 'wed' for Wednesday."""
    if not label:
        return []
    numbers = [v.text for v in clause.values if v.number is not None and not v.quoted and normalize(label) == v.text]
    days = [w for w in clause.words if w in WEEKDAYS and (abbreviation_match(w, label) or normalize(label) == w)]
    return numbers + days


def mention_position(option_text: str, text: str, siblings: list[str] = ()) -> tuple[int, int] | None:
    """Where and how specifically `text` names an option: (position, parts named), or None.

    The whole option ("Basic rock") counts most; otherwise its distinctive parts ("°C" for
    "°C Celsius", "kilograms" for "kilograms (kg)", "High" for "Priority: High") — a part every
    sibling option shares ("Priority:", "sessions") names none of them.
    """
    haystack = normalize(text)

    def find(part: str) -> int | None:
        needle = normalize(part)
        if not needle or needle in STOPWORDS or needle.isdigit():
            return None
        match = re.search(r"(?<![a-z0-9])" + re.escape(needle) + r"(?![a-z0-9])", haystack)
        return match.start() if match else None

    whole = find(option_text)
    if whole is not None:
        return whole, 100
    split = lambda t: {normalize(p) for p in re.split(r"[\s()/,:]+", t) if len(p) >= 2}
    shared = set.intersection(*(split(t) for t in siblings)) if len(siblings) > 1 else set()
    positions = [p for p in (find(part) for part in split(option_text) - shared) if p is not None]
    return (min(positions), len(positions)) if positions else None


def exact_name_match(text: str, element: Element) -> bool:
    return normalize(text) in {normalize(element.name), normalize(element.text), normalize(element.aria_label), normalize(element.title)} - {""}
