"""Questions in a task, and answers read off the page.

"Add 'Milk' to the cart. How many items are in the cart?" is an instruction to carry out and a
question to answer once it is done (OSUniverse's answer check: the text of `finished`).
`split_question` separates the two; `answer_question` looks for the question's key words in the
page's visible text (and in the fields' values, which that text leaves out) and takes the number
or short phrase that goes with the best matching line: on it, or on the line just below or above
when that line is only a value ("Expenses logged" / "3").

An honest baseline: it reads only what a user could read, never the app's state, and it answers
nothing rather than a number from nowhere. It is wrong when the page words the thing differently
from the question, shows the answer only as a highlight (which option is selected), or when
answering needs counting rows or arithmetic.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path

from playwright.async_api import Page

from cua import isolated_world
from ._page import FIELD_KINDS, PageView
from ._task import _mask_quotes, _restore, _strip_placeholders
from ._text import GENERIC_WORDS, concept_set, content_words, stem

READ_TEXT = Path(__file__).with_name("_read_text.js").read_text(encoding="utf-8")
MAX_TEXT_CHARS = 20_000
MAX_PHRASE_CHARS = 80
MAX_VALUE_WORDS = 6  # a line beside a label that is a value, not another label or a paragraph

_QUESTION_WORDS = r"how|what|what's|whats|which|who|whose|when|where|why"
_YES_NO_WORDS = r"is|are|was|were|does|do|did|has|have|had|can|could|will|would|should"
_REQUEST = re.compile(r"^(?:(?:can|could|would|will)\s+you\s+)(?:please\s+)?", re.IGNORECASE)
_ASK = re.compile(r"^(?:please\s+)?(?:tell me|let me know|report back)\b[\s,:]*", re.IGNORECASE)
_STARTS_QUESTION = re.compile(rf"^(?:{_QUESTION_WORDS})\b", re.IGNORECASE)
_STARTS_YES_NO = re.compile(rf"^(?:{_YES_NO_WORDS})\b", re.IGNORECASE)
# "…, then tell me the total": an ask at the end of an instruction.
_TRAILING_ASK = re.compile(
    r"(?:[,;]\s*|\s+)(?:and\s+)?(?:then\s+)?(?=(?:tell me|let me know|report back)\b)", re.IGNORECASE
)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
# Words that ask rather than name what is asked about.
_FILLER = frozenset(stem(w) for w in (
    "many much tell say answer know find report let back current currently shown show displayed display "
    "showing page app screen right now exactly see listed appear appears"
).split())
_NUMBER = re.compile(
    r"(?<![\w.,])(?P<currency>[$€£¥]\s?)?(?P<digits>-?\d{1,3}(?:,\d{3})+(?:\.\d+)?|-?\d+(?:\.\d+)?)(?P<percent>\s?%)?"
    r"(?:\s?(?P<after>[$€£¥]))?"
)


@dataclass(frozen=True)
class Question:
    """What the task asks: its text, the kind of answer, and the stemmed words that locate it."""

    text: str
    kind: str  # count ("how many") | amount ("how much", a number) | phrase (what / which / who) | yes_no
    words: tuple[str, ...]


@dataclass(frozen=True)
class Answer:
    text: str | None  # None: nothing on the page answers it
    line: str = ""  # the line the answer was read from
    reason: str = ""


def split_question(task: str) -> tuple[str, Question | None]:
    """(the instructions to carry out first, the question to answer after them, or None).

    A question is a sentence ending in "?" or starting with a question word ("How many …",
    "What is …"), or an ask ("Tell me …", "…, then tell me the total"). "Can you add 'Milk'?"
    is a polite instruction, not a question. Quoted text never splits or asks.
    """
    masked, quoted = _mask_quotes(" ".join(task.split()))
    instructions: list[str] = []
    questions: list[str] = []
    for sentence in _SENTENCE_END.split(masked):
        sentence = sentence.strip()
        if not sentence:
            continue
        asked = _question_of(sentence)
        trailing = _TRAILING_ASK.search(sentence) if asked is None else None
        if trailing and trailing.start() > 0:
            sentence, asked = sentence[: trailing.start()].strip(" ,;") + ".", _question_of(sentence[trailing.end():])
            instructions.append(sentence)
        elif asked is None:
            instructions.append(sentence)
        if asked is not None:
            questions.append(asked)
    if not questions:
        return task, None
    text = _restore(" ".join(questions), quoted)
    instruction_text = _restore(" ".join(instructions), quoted).strip()
    return instruction_text, Question(text=text, kind=_kind(text), words=_key_words(text))


def _question_of(sentence: str) -> str | None:
    """The question a sentence asks, or None when it is an instruction."""
    rest = _REQUEST.sub("", sentence, count=1)
    polite = rest != sentence
    asked = _ASK.sub("", rest, count=1)
    if asked != rest:
        return asked.strip() or None
    if _STARTS_QUESTION.match(rest):
        return rest
    # "Could you add 'Milk'?": an instruction said politely
    return sentence if sentence.endswith("?") and not polite else None


def _kind(text: str) -> str:
    lowered = text.lower()
    if re.search(r"\bhow many\b|\bnumber of\b|\bcount of\b", lowered):
        return "count"
    if re.search(r"\bhow (much|long|old|far|high|big|large|fast)\b|\bwhat (percentage|percent|amount)\b", lowered):
        return "amount"
    if _STARTS_YES_NO.match(lowered) and not _STARTS_QUESTION.match(lowered):
        return "yes_no"
    return "phrase"


def _key_words(text: str) -> tuple[str, ...]:
    words = [w for w in content_words(_strip_placeholders(text)) if w not in _FILLER and not w.isdigit()]
    return tuple(dict.fromkeys(words))


async def read_text(page: Page, timeout_ms: int = 2_000) -> str:
    """The page's visible text (`document.body.innerText`). Raises JavaScriptError / JavaScriptTimeout."""
    return str(await isolated_world(page).call(READ_TEXT, MAX_TEXT_CHARS, timeout_ms=timeout_ms) or "")


def field_lines(view: PageView) -> list[str]:
    """"Label: value" for every field with a value: the visible text leaves form values out."""
    lines = []
    for element in view.elements:
        if element.kind in FIELD_KINDS | {"range"} and element.value.strip():
            value = element.value.strip()
        elif element.kind == "select":
            value = next((o.text for o in element.options if o.selected), "")
        else:
            continue
        name = element.label or element.aria_label or element.before or element.placeholder or element.title
        if name and value:
            lines.append(f"{name}: {value}")
    return lines


def answer_question(question: Question, text: str, extra_lines: list[str] = ()) -> Answer:
    """The answer the page's `text` (and `extra_lines`, e.g. `field_lines`) gives to `question`."""
    if question.kind == "yes_no":
        return Answer(None, reason="a yes/no question: the page's text cannot settle it")
    if not question.words:
        return Answer(None, reason="the question names nothing to look for")
    text_lines = [line for line in (" ".join(raw.split()) for raw in text.splitlines()) if line]
    lines = text_lines + [" ".join(line.split()) for line in extra_lines if line.strip()]
    wanted = {word: concept_set([word]) for word in question.words}
    scored = [(-score, len(line), index) for index, line in enumerate(lines) if (score := _score(line, wanted)) > 0]
    # Best first: most of the question's words, then the shortest line (a label, not a paragraph).
    for _, _, index in sorted(scored):
        # Only the page's own lines have neighbours: an extra line stands alone.
        found = _answer_on(question, lines if index < len(text_lines) else [lines[index]],
                           index if index < len(text_lines) else 0, wanted)
        if found is not None:
            return found
    what = {"count": "a count", "amount": "a number", "phrase": "a value"}.get(question.kind, "an answer")
    return Answer(None, reason=f"no line that mentions {', '.join(question.words)} shows {what}")


def _score(line: str, wanted: dict[str, set[str]]) -> float:
    """How much of the question `line` mentions: 1 a word as written, 0.75 a word of the same concept
    ("monthly" / "month"), half that for generic words ("item", "list")."""
    stems = set(content_words(line))
    concepts = concept_set(list(stems))
    return sum((1.0 if word in stems else 0.75 if meaning & concepts else 0.0) * (0.5 if word in GENERIC_WORDS else 1.0)
               for word, meaning in wanted.items())


def _answer_on(question: Question, lines: list[str], index: int, wanted: dict[str, set[str]]) -> Answer | None:
    line = lines[index]
    if question.kind in ("count", "amount"):
        value = _number_in(line, question.kind, wanted)
        if value is not None:
            return Answer(value, line, f"the line {line!r} mentions {', '.join(question.words)} and shows {value}")
        for neighbour in (index + 1, index - 1):  # a value under (or over) its label
            if 0 <= neighbour < len(lines) and _is_value(lines[neighbour], wanted):
                value = _number_in(lines[neighbour], question.kind, {})
                if value is not None:
                    return Answer(value, lines[neighbour], f"{value} sits next to {line!r}")
        return None
    label, _, after = line.partition(":")
    if after.strip() and _score(label, wanted) > 0:
        return Answer(after.strip()[:MAX_PHRASE_CHARS], line, f"{line!r} gives it after its label")
    if index + 1 < len(lines) and _is_value(lines[index + 1], wanted):
        value = lines[index + 1]
        return Answer(value[:MAX_PHRASE_CHARS], value, f"{value!r} sits under {line!r}")
    rest = _without_words(line, wanted)
    if rest:
        return Answer(rest[:MAX_PHRASE_CHARS], line, f"{line!r} names it beside the question's words")
    return None


def _is_value(line: str, wanted: dict[str, set[str]]) -> bool:
    """A short line with a letter or digit that names none of the question's words: a value beside its label."""
    return (0 < len(line.split()) <= MAX_VALUE_WORDS and any(c.isalnum() for c in line)
            and _score(line, wanted) == 0)


def _without_words(line: str, wanted: dict[str, set[str]]) -> str:
    """What is left of a short line once the question's words (and filler) are gone: "Theme Dark" → "Dark"."""
    if len(line.split()) > MAX_VALUE_WORDS:
        return ""
    asked = set().union(*wanted.values())
    kept = [raw.strip(" ,;·:") for raw in line.split()
            if (word := content_words(raw)) and not concept_set(word) & asked]
    return " ".join(w for w in kept if w)


def _number_in(line: str, kind: str, wanted: dict[str, set[str]]) -> str | None:
    """The number on `line` that answers: a whole number for a count (no money, no percentage, no
    fraction), any for an amount; the one nearest the question's words when there are several."""
    candidates = []
    for match in _NUMBER.finditer(line):
        if not _stands_alone(line, match):
            continue
        digits = match.group("digits")
        money = bool(match.group("currency") or match.group("after"))
        if kind == "count" and (money or match.group("percent") or "." in digits):
            continue
        # `float` reads every digit `\d` matches; only a number past the largest float (inf) is left out.
        if math.isfinite(float(digits.replace(",", ""))):
            candidates.append(match)
    if not candidates:
        return None
    anchors = [m.start() for m in re.finditer(r"[A-Za-z][\w'-]*", line)
               if concept_set(content_words(m.group())) & set().union(*wanted.values())] if wanted else []
    best = min(candidates, key=lambda m: min(abs(m.start() - a) for a in anchors)) if anchors else candidates[0]
    return best.group("digits").replace(",", "") if kind == "count" else best.group(0).strip()


_TOKEN_EDGE = "()[]{}#,.;:!?\"'·×"
_PLAIN_NUMBER = re.compile(r"[$€£¥]?-?\d[\d,]*(?:\.\d+)?(?:%|[a-z]{1,4}|[$€£¥])?")


def _stands_alone(line: str, match: re.Match) -> bool:
    """The number is a word of its own ("€568.00", "(20%)", "10pm", "3/4"), not digits inside a code
    or a password ("48uW@Mtf"), nor part of a date ("2025-01-15")."""
    digits_at = match.start("digits")
    start = max(line.rfind(" ", 0, digits_at), line.rfind("/", 0, digits_at)) + 1
    ends = [i for i in (line.find(" ", digits_at), line.find("/", digits_at)) if i != -1]
    token = line[start:min(ends) if ends else len(line)].strip(_TOKEN_EDGE)
    return _PLAIN_NUMBER.fullmatch(token) is not None
