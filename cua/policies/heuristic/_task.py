"""Reading a task: which actions, in which order, with which values.

"Add a habit 'Meditate' and tick it off for Wednesday" becomes two clauses: (add, values
['Meditate'], words [habit]) and (check, words [wednesday], pronoun → the habit just added).
Only the task text is read — never its checker or expected outcome.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from ._text import STOPWORDS, content_words, stem, tokens

# Verb (as written, lower-case) -> intent. Intents other than these are button verbs kept as is.
_INTENT_WORDS = {
    "add": "add create insert append log put include schedule book plan",
    "type": "type enter write fill input paste",
    "set": "set change adjust update make configure modify edit rename increase decrease raise lower slow speed "
    "bump reduce push pull drag move slide mix",
    "select": "select choose pick switch use",
    "open": "open go navigate visit view show display expand see browse jump reveal",
    "click": "click press tap hit",
    "toggle": "toggle flip",
    "on": "enable activate",
    "off": "disable deactivate",
    "check": "check tick mark complete finish",
    "uncheck": "uncheck untick unmark",
    "delete": "delete remove clear erase discard drop trash",
    "search": "search find look filter",
}
INTENT_OF = {word: intent for intent, words in _INTENT_WORDS.items() for word in words.split()}
BUTTON_VERBS = frozenset(
    """start stop pause resume reset play record save load export import sort shuffle undo redo copy share download
    upload submit send confirm cancel close skip generate calculate convert randomize randomise roll draw subscribe
    donate register join buy order pay mute unmute zoom print hide collapse apply split settle duplicate archive pin
    star like favorite favourite bookmark vote rate login logout signup signin continue next previous back refresh
    restart solve guess answer spin rotate test run compute preview present export clone swap reverse invert""".split()
)
# Intents whose clause is finished by pressing a button (or Enter when there is none).
SUBMIT_INTENTS = frozenset({"add", "search", "submit", "send", "save", "apply", "login", "signup", "register", "subscribe", "donate", "join", "calculate", "convert", "generate", "guess", "answer", "solve", "test", "run", "compute"})
DESIRED_STATE = {"on": True, "check": True, "add": True, "off": False, "uncheck": False, "delete": False, "mute": True, "unmute": False}

_QUOTES = [("\"", "\""), ("“", "”"), ("‘", "’"), ("`", "`"), ("«", "»")]
_SINGLE_QUOTED = re.compile(r"(?<![\w])'([^']+?)'(?![\w])")
_NUMBER = re.compile(r"(?<![\w#.\x00])([$€£])?(-?\d+(?:[.,]\d+)?)(?:\s*-?\s*(%|[a-zA-Z]+\b))?")
_EXTREME = {
    "max": re.compile(r"\b(maximum|max|highest|largest|longest|all the way up|as many|as much|as high)\b"),
    "min": re.compile(r"\b(minimum|min|lowest|smallest|shortest|all the way down)\b"),
}
_UNITS = {
    "%": "percent", "percent": "percent", "bpm": "bpm", "px": "px", "ms": "ms", "s": "second", "sec": "second", "secs": "second",
    "seconds": "second", "second": "second", "m": "minute", "min": "minute", "mins": "minute", "minute": "minute",
    "minutes": "minute", "h": "hour", "hr": "hour", "hrs": "hour", "hour": "hour", "hours": "hour", "times": "times",
    "x": "times", "days": "day", "day": "day", "kg": "kg", "lb": "lb", "lbs": "lb", "oz": "oz", "g": "g", "km": "km",
    "mi": "mi", "pages": "page", "year": "year", "years": "year", "month": "month", "months": "month", "week": "week", "weeks": "week", "items": "item", "degrees": "degree", "st": "ordinal", "nd": "ordinal",
    "rd": "ordinal", "th": "ordinal", "pm": "clock", "am": "clock",
}
_MEASURE_WORDS = {"long", "high", "tall", "wide", "deep", "old", "heavy", "big", "large", "ago", "later", "each", "per", "apart", "away", "total"}
_CURRENCY = {"$": "dollar", "€": "euro", "£": "pound"}
_FIRST_PERSON = {"i", "i'm", "im", "we", "we're", "i've", "my", "our"}
_WISHES = {"want", "need", "would", "like", "wanna", "must", "have", "should"}
_PREAMBLE = {"please", "try", "now", "then", "also", "just", "first", "finally", "next", "quickly", "again", "go", "ahead", "let's", "lets", "i", "want", "to", "would", "like", "can", "you", "could", "and"}


@dataclass(frozen=True)
class Value:
    """A value the task names: a quoted string, a number (with its unit) or an extreme ("max")."""

    text: str
    quoted: bool = False
    number: float | None = None
    unit: str = ""
    before: tuple[str, ...] = ()  # stemmed content words just before it in its clause
    after: tuple[str, ...] = ()
    extreme: str | None = None  # "max" | "min"
    reference: bool = False  # names an existing thing ("rename 'A' to 'B'": A), not something to enter
    in_list: bool = False  # one of several quoted values listed together ("'A', 'B' and 'C'")
    proper: bool = False  # an unquoted capitalised name ("add Eve"): belongs in a name field
    next_to: tuple[str, ...] = ()  # content words right beside it: "10% down", "tempo 120"


@dataclass(frozen=True)
class Clause:
    text: str
    verb: str | None  # intent ("add", "set", ...) or a button verb ("start", "save", ...)
    verb_word: str = ""  # stemmed verb as written
    words: tuple[str, ...] = ()  # stemmed content words without the verb and the values
    values: tuple[Value, ...] = ()
    every: bool = False  # "every", "all": act on all matching things
    pronoun: bool = False  # "it", "them": the thing of the previous clause
    desired: bool | None = None  # the state a toggle should end in (None: flip once)
    repeat: int = 1  # "press next 3 times"
    names: tuple[str, ...] = ()  # capitalised words ("add Eve to the group"): text to type when nothing is quoted
    joined: bool = False  # tied to the clause before by a comma or "and" (may complete the same form)
    only: bool = False  # "split only between Chloe and Dev": the named choices on, the others off

    @property
    def submits(self) -> bool:
        return self.verb in SUBMIT_INTENTS


@dataclass(frozen=True)
class ParsedTask:
    text: str
    clauses: tuple[Clause, ...] = field(default_factory=tuple)


def _mask_quotes(text: str) -> tuple[str, list[str]]:
    """Replace quoted spans by `\\x00N\\x00` placeholders so separators inside them cannot split."""
    found: list[str] = []

    def keep(match: re.Match) -> str:
        found.append(match.group(1))
        return f"\x00{len(found) - 1}\x00"

    for opening, closing in _QUOTES:
        text = re.sub(re.escape(opening) + r"([^" + re.escape(closing) + r"\n]+?)" + re.escape(closing), keep, text)
    text = _SINGLE_QUOTED.sub(keep, text)
    return text, found


_VERBS = "|".join(sorted(set(INTENT_OF) | BUTTON_VERBS | {"turn", "take", "sign", "log"}, key=len, reverse=True))
_SPLIT = re.compile(
    r"(?:[.!?;]\s+|\s+[—–-]\s+|:\s+|\s*,?\s*\b(?:and then|then|after that|afterwards)\b\s*"
    r"|\s*,\s*(?:and\s+)?(?:please\s+)?(?=(?:" + _VERBS + r")\b)|\s+and\s+(?:please\s+)?(?=(?:" + _VERBS + r")\b)"
    r"|\s*,?\s*\b(but|so that|so)\b\s+|,\s+please\s+)",
    re.IGNORECASE,
)


def _split(masked: str) -> list[tuple[str, str]]:
    """(separator, clause) pairs; the separator before a clause is 'but' / 'so' / 'so that',
    'then' (a new step: sentence end, dash, "then") or 'and' (a comma or "and": the same step)."""
    parts: list[tuple[str, str]] = []
    last, separator = 0, ""
    for match in _SPLIT.finditer(masked):
        parts.append((separator, masked[last : match.start()]))
        if match.group(1):
            separator = match.group(1).lower()
        else:
            separator = "then" if re.search(r"[.!?;:—–-]|then|after", match.group(0), re.IGNORECASE) else "and"
        last = match.end()
    parts.append((separator, masked[last:]))
    return [(sep, text.strip(" ,.!?")) for sep, text in parts if text.strip(" ,.!?")]


def _find_verb(words: list[str]) -> tuple[str | None, str, int]:
    """(intent or button verb, the word as written, its index) of the clause's first verb."""
    if words[:1] and words[0] in _FIRST_PERSON and (words[1:2] or [""])[0] not in _WISHES:
        return None, "", -1  # "I read my 20 pages", "I'm buying a home": a description, not an order
    for index, word in enumerate(words):
        if word in _PREAMBLE and word not in INTENT_OF:
            continue
        following = words[index + 1 : index + 4]
        if word in ("turn", "switch") and ("on" in following or "off" in following):
            return ("on" if "on" in following and ("off" not in following or following.index("on") < following.index("off")) else "off"), word, index
        if word == "take" and "out" in words[index + 1 : index + 6]:
            return "delete", word, index
        particle = next((w for w in following if w in ("up", "in", "out")), None)
        if word in ("sign", "log") and particle:
            return {"up": "signup", "in": "login", "out": "logout"}[particle], word, index
        if word in ("go", "switch") and following[:1] in (["to"], ["back"]):
            return ("previous" if following[0] == "back" else "open" if word == "go" else "select"), word, index
        if word == "look" and following[:1] == ["up"]:
            return "search", word, index
        if word == "start" and following[:1] == ["tracking"]:
            return "add", word, index  # "start tracking 'Stretch'" adds a habit
        stemmed = stem(word)
        for candidate in (word, stemmed, stemmed + "e", word.rstrip("s")):
            if candidate in INTENT_OF:
                return INTENT_OF[candidate], word, index
            if candidate in BUTTON_VERBS:
                return candidate, word, index
        if word.endswith("ing") and (word[:-3] in INTENT_OF or word[:-3] in BUTTON_VERBS):
            root = word[:-3]
            return INTENT_OF.get(root, root), word, index
        if word not in STOPWORDS:
            return None, "", -1  # the clause starts with something else: not an imperative
    return None, "", -1


def _values(masked: str, quoted: list[str], verb_word: str, allow_extremes: bool) -> list[Value]:
    """Quoted strings and numbers in the clause, in order, with the words around each."""
    found = [(match.start(), match.end(), Value(text=quoted[int(match.group(1))], quoted=True))
             for match in re.finditer(r"\x00(\d+)\x00", masked)]
    for match in _NUMBER.finditer(masked):
        currency, digits, unit_word = match.group(1), match.group(2), (match.group(3) or "")
        unit = _UNITS.get(unit_word.lower(), "") or _CURRENCY.get(currency or "", "")
        end = match.end() if unit_word.lower() in _UNITS else match.end(2)
        thousands = "," in digits and len(digits.split(",")[-1]) == 3  # "1,200" vs the decimal comma "2,5"
        plain = digits.replace(",", "") if thousands else digits.replace(",", ".")
        found.append((match.start(), end, Value(text=plain, number=float(plain), unit=unit)))
    lowered = masked.lower()
    if allow_extremes and not any(v.number is not None for _, _, v in found):
        for extreme, pattern in _EXTREME.items():
            match = pattern.search(lowered)
            if match:
                found.append((match.start(), match.end(), Value(text=extreme, extreme=extreme)))
                break
    found.sort(key=lambda item: item[0])
    values = []
    # A value's words are those between it and its neighbours: "a $350,000 home with 10% down".
    for index, (start, end, value) in enumerate(found):
        previous_end = found[index - 1][1] if index else 0
        next_start = found[index + 1][0] if index + 1 < len(found) else len(masked)
        before = [w for w in content_words(_strip_placeholders(masked[previous_end:start])) if w != stem(verb_word)][-3:]
        after = content_words(_strip_placeholders(masked[end:next_start]))[:2]
        # Beside means touching: "(quantity 1)" puts "quantity" with 1, not with the 60 g before it.
        left_text, right_text = _strip_placeholders(masked[previous_end:start]), _strip_placeholders(masked[end:next_start])
        left = tokens(left_text)[-1:] if re.search(r"[\w'%]\s*$", left_text) else []
        right = tokens(right_text)[:1] if re.match(r"\s*[\w']", right_text) else []
        if value.unit and right and right[0] in _MEASURE_WORDS:
            right = []  # "50 minutes long": "long" measures the value, it does not name a field
        next_to = tuple(stem(w) for w in left + right if w not in STOPWORDS and stem(w) != stem(verb_word))
        values.append(replace(value, before=tuple(before), after=tuple(after), next_to=next_to))
    return _mark_lists_and_references(masked, found, values)


def _strip_placeholders(text: str) -> str:
    return re.sub(r"\x00\d+\x00", " ", text)


def _mark_lists_and_references(masked: str, found: list, values: list[Value]) -> list[Value]:
    out = list(values)
    quoted_spans = [(i, s, e) for i, (s, e, v) in enumerate(found) if v.quoted]
    for (i, _, end), (j, start, _) in zip(quoted_spans, quoted_spans[1:]):
        gap = masked[end:start].strip().lower()
        if gap in (",", "and", ", and", "or", ", or", "&"):
            out[i] = replace(out[i], in_list=True)
            out[j] = replace(out[j], in_list=True)
        # "rename 'A' to 'B'", "change 'A' to 'B'", "from 'A' to 'B'": A names what exists.
        if gap in ("to", "into", "as") and not out[i].in_list:
            out[i] = replace(out[i], reference=True)
    # "3 water bottles instead of 2", "High rather than Low": the second is what is there now.
    for index, (start, _, _) in enumerate(found):
        if re.search(r"\b(instead of|rather than|not)\s*$", masked[:start], re.IGNORECASE):
            out[index] = replace(out[index], reference=True)
    return out


def parse_task(text: str) -> ParsedTask:
    """Split a task into clauses with their intents, words and values. Never raises."""
    masked, quoted = _mask_quotes(" ".join(text.split()))
    clauses: list[Clause] = []
    context: list[Clause] = []  # verb-less fragments ("I read my 20 pages on Wednesday")
    for separator, part in _split(masked):
        words = tokens(_strip_placeholders(part))
        verb, verb_word, index = _find_verb(words)
        if separator in ("so", "so that"):
            continue  # a purpose ("so its streak shows 3"), not an instruction
        if separator == "but" and (not words or words[0] in ("keep", "leave", "don't", "do", "not", "without")):
            continue
        if verb is None and words and words[0] in ("keep", "leave", "don't", "never", "without"):
            continue
        if verb is None and _EXPECTATION.search(f" {' '.join(words)} "):
            continue  # "the app must fall back to 1 minute": what should happen, not what to do
        values = _values(part, quoted, verb_word, allow_extremes=verb in ("set", "select", None))
        if verb == "search" and not any(v.quoted for v in values):
            values = _search_text(part) + values
        lowered = f" {' '.join(words)} "
        numbers = {value.text for value in values if value.number is not None}
        clause_words = [w for w in content_words(_strip_placeholders(part))
                        if w != stem(verb_word) and w not in numbers]
        repeat = next((int(v.number) for v in values if v.unit == "times" and v.number and 1 < v.number <= 10), 1)
        clause = Clause(
            text=_restore(part, quoted),
            verb=verb,
            verb_word=stem(verb_word) if verb_word else "",
            words=tuple(clause_words),
            values=tuple(v for v in values if v.unit != "times"),
            every=any(f" {w} " in lowered for w in ("every", "all", "each")),
            pronoun=any(f" {w} " in lowered for w in ("it", "them", "its", "this", "that one")),
            desired=DESIRED_STATE.get(verb or ""),
            repeat=repeat,
            names=_proper_names(part),
            joined=separator == "and",
            only=" only " in lowered,
        )
        if verb is None:
            if clause.words or clause.values:
                context.append(clause)
            continue
        clauses.append(_absorb(clause, context))
        context = []
    if context and clauses:
        clauses[-1] = _absorb(clauses[-1], context)
    elif context:  # no verb at all: a bare description ("Dark mode please") is a click/select
        merged = _absorb(Clause(text=text, verb=None), context)
        clauses.append(replace(merged, verb="click"))
    return ParsedTask(text=text, clauses=tuple(clauses))


_NOT_NAMES = STOPWORDS | set(INTENT_OF) | BUTTON_VERBS | _PREAMBLE  # a capitalised word that starts no name
_EXPECTATION = re.compile(r" (must|should|shouldn't|will|won't|would|expect|expected|supposed) ")


def _search_text(masked: str) -> list[Value]:
    """"Search the archive for the episode about field recording" → "field recording"."""
    match = re.search(r"\b(?:about|for|called|named|titled|containing|with)\s+((?:the\s+|an?\s+)?[^\x00]+)$", masked, re.IGNORECASE)
    if not match:
        return []
    text = re.sub(r"^(?:the|an?)\s+", "", match.group(1), flags=re.IGNORECASE).strip(" .,!?")
    inner = re.search(r"\b(?:about|for|called|named|titled|containing|with)\s+(.+)$", text, re.IGNORECASE)
    text = inner.group(1).strip() if inner else text
    return [Value(text=text, quoted=True)] if text else []


def _proper_names(masked: str) -> tuple[str, ...]:
    found = re.finditer(r"(?<![\w\x00])[A-Z][a-z]+(?:\s[A-Z][a-z]+)*\b", _strip_placeholders(masked))
    return tuple(m.group(0) for m in found if m.group(0).split()[0].lower() not in _NOT_NAMES)


def _absorb(clause: Clause, context: list[Clause]) -> Clause:
    """Fold verb-less fragments' words and values into the clause they describe."""
    if not context:
        return clause
    words = tuple(w for c in context for w in c.words) + clause.words
    values = tuple(v for c in context for v in c.values) + clause.values
    names = tuple(n for c in context for n in c.names) + clause.names
    return replace(clause, words=words, values=values, names=names, every=clause.every or any(c.every for c in context))


def _restore(masked: str, quoted: list[str]) -> str:
    return re.sub(r"\x00(\d+)\x00", lambda m: f'"{quoted[int(m.group(1))]}"', masked)


def expand_lists(parsed: ParsedTask) -> ParsedTask:
    """"Add 'A', 'B' and 'C'" → three add clauses, one value each (each needs its own submit)."""
    clauses: list[Clause] = []
    for clause in parsed.clauses:
        listed = [v for v in clause.values if v.in_list]
        if clause.verb in ("add", "type") and len(listed) > 1:
            others = tuple(v for v in clause.values if not v.in_list)
            clauses += [replace(clause, values=(replace(v, in_list=False),) + others) for v in listed]
        else:
            clauses.append(clause)
    return replace(parsed, clauses=tuple(clauses))
