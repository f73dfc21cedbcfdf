"""Words and how well two pieces of text agree: the heuristic policy's sense of meaning.

Deliberately small: lower-casing, a light stemmer, a table of concepts (so "create" meets "+"
and "Add", "remove" meets "×" and "Delete"), weekday abbreviations and phrase tests.
Deterministic and dependency-free.
"""

from __future__ import annotations

import re
from functools import lru_cache

STOPWORDS = frozenset(
    """a an the to of for in on at by with from into onto and or but so as is are be it its it's this that these those
    my me i i'm we our you your please now then also just again all every each some any there here up out off over
    can could would should will want need like let let's using use via than too very really only one ones which who
    what when where how do does did done don't have has had get got make sure try trying new""".split()
)
# "new", "up", "off", "all", "done" carry meaning in some tasks; parsing handles those words
# before stop-words are removed, matching ignores them.

# Symbols that are whole words on buttons.
SYMBOL_WORDS = {
    "+": "plus", "＋": "plus", "−": "minus", "–": "minus", "×": "times-sign", "✕": "times-sign", "✖": "times-sign",
    "✓": "tick", "✔": "tick", "▶": "play", "►": "play", "⏵": "play", "⏸": "pause", "■": "stop", "⏹": "stop",
    "←": "left-arrow", "→": "right-arrow", "‹": "left-arrow", "›": "right-arrow", "«": "left-arrow", "»": "right-arrow",
    "⚙": "gear", "🗑": "bin", "✎": "pencil", "✏": "pencil", "🔍": "magnifier", "⟳": "reload", "↻": "reload", "%": "percent",
    "$": "dollar", "€": "euro", "£": "pound",
}

# Concepts: every word in a group stands for the group's first word.
_CONCEPT_GROUPS = [
    "add create plus insert append new",
    "delete remove bin trash erase discard times-sign del",
    "close dismiss times-sign",
    "clear empty wipe",
    "start play begin go resume",
    "stop halt",
    "pause hold",
    "reset restart reload",
    "next forward right-arrow skip",
    "previous prev back left-arrow",
    "search find lookup magnifier look",
    "save store keep",
    "submit send confirm ok",
    "settings setting preferences options config configuration gear",
    "edit rename modify pencil change",
    "complete done finish tick check mark",
    "increase raise increment higher more faster speed",
    "decrease lower decrement less reduce slower slow minus",
    "colour color",
    "minute min mins",
    "second sec secs",
    "hour hr hrs",
    "year yr yrs annual yearly",
    "month mo monthly",
    "percent percentage pct",
    "theme mode appearance",
    "dark night",
    "show display view reveal open expand see",
    "hide collapse",
    "download export",
    "upload import",
    "random randomize randomise shuffle",
    "number count amount quantity qty",
    "name title label called named titled",
    "length long size",
    "work focus",
    "weight weigh heavy mass",
    "mute silence",
    "sound audio volume",
    "total sum",
]
WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?|[^\sa-z0-9]")


def stem(word: str) -> str:
    """A light, consistent stem: plurals, -ing, -ed and a final e go ("muted" and "mute" meet)."""
    if len(word) <= 3 or not word.isalpha():
        return word
    for suffix, replacement in (("ies", "y"), ("ches", "ch"), ("shes", "sh"), ("sses", "ss"), ("xes", "x")):
        if word.endswith(suffix):
            return word[: -len(suffix)] + replacement
    if word.endswith("s") and not word.endswith("ss") and not word.endswith("us"):
        word = word[:-1]
    elif (word.endswith("ing") and len(word) > 5) or (word.endswith("ed") and len(word) > 4):
        word = word[:-3] if word.endswith("ing") else word[:-2]
        if len(word) > 3 and word[-1] == word[-2] and word[-1] not in "aeiouls":
            word = word[:-1]  # "stopped" -> "stop"; "added" -> "add" keeps its pair (too short)
    if word.endswith("e") and len(word) > 3:
        word = word[:-1]
    return word


# Words that name no particular control ("New list" is not what "mark every item on the list" means).
GENERIC_WORDS = frozenset(stem(w) for w in "list item page app button section menu panel form field value thing data view entry".split())


_STEMMED_GROUPS = [[stem(w) for w in group.split()] for group in _CONCEPT_GROUPS]


@lru_cache(maxsize=4096)
def _concepts_of(word_stem: str) -> frozenset[str]:
    return frozenset({word_stem} | {"@" + members[0] for members in _STEMMED_GROUPS if word_stem in members})


def split_identifier(text: str) -> str:
    """'addTaskBtn' / 'add_task-btn' -> 'add Task Btn' / 'add task btn' (ids are camel or snake)."""
    return re.sub(r"([a-z])([A-Z])", r"\1 \2", text).replace("_", " ").replace("-", " ")


def tokens(text: str) -> list[str]:
    """Lower-case word and symbol tokens, symbols named ('+' -> 'plus'), in order, stop-words kept."""
    out = []
    for raw in _WORD.findall((text or "").lower().replace("’", "'")):
        if raw in SYMBOL_WORDS:
            out.append(SYMBOL_WORDS[raw])
        elif raw[0].isalnum():
            out.append(raw[:-2] if raw.endswith("'s") else raw)
    return out


def content_words(text: str) -> list[str]:
    """Stemmed tokens without stop-words, in order."""
    return [stem(t) for t in tokens(text) if t not in STOPWORDS]


def normalize(text: str) -> str:
    """For equality tests: lower-case, single spaces, no surrounding punctuation."""
    return " ".join((text or "").lower().replace("’", "'").split()).strip(" .,:;!?\"'“”‘’")


def concept_set(words: list[str]) -> set[str]:
    return set().union(*map(_concepts_of, words))


def mentions_phrase(haystack: str, phrase: str) -> bool:
    """Does `haystack` contain `phrase` as whole words (case- and spacing-insensitive)?"""
    needle = normalize(phrase)
    if not needle:
        return False
    return re.search(r"(?<![a-z0-9])" + re.escape(needle) + r"(?![a-z0-9])", normalize(haystack)) is not None


def abbreviation_match(word: str, label: str) -> bool:
    """'wednesday' ~ 'Wed' / 'W', 'red' ~ 'R', 'march' ~ 'Mar': a label that abbreviates the word."""
    label = normalize(label).rstrip(".")
    if not label.isalpha() or not word.isalpha() or len(label) >= len(word):
        return False
    if len(label) == 1:
        return len(word) >= 3 and word[0] == label
    return word.startswith(label) and len(label) >= 2
