"""One scanner for JavaScript and CSS: which characters are code, and how deep in brackets each one is."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Literal

_REGEX_AFTER_WORDS = {"return", "typeof", "case", "in", "of", "new", "delete", "void", "throw", "yield", "await"}
_CLOSERS = {"(": ")", "[": "]", "{": "}"}
_NOT_NEWLINE = re.compile(r"[^\n]")
# Where a comment or a literal may begin, by (JavaScript?, comments?): everything between is code.
_STARTS = {(True, True): re.compile(r"[/'\"`]"), (True, False): re.compile(r"[/'\"`]"),
           (False, True): re.compile(r"/\*|['\"]"), (False, False): re.compile(r"['\"]")}
# What ends or interrupts a string (an escape, its quote, a line break) or a template literal.
_STRING_STOPS = {"'": re.compile(r"[\\'\n]"), '"': re.compile(r'[\\"\n]'), "`": re.compile(r"[\\`]|\$\{")}


def mask(code: str, language: Literal["js", "css"] = "js", *, comments: bool = True) -> str:
    """`code` with comments and the insides of its literals replaced by spaces: `'{'` → `' '`.

    JavaScript: `//` and `/* */` comments, strings, template literals (their `${…}` too) and regular
    expressions (`/[)]/g`, told from a division by what precedes them); CSS: `/* */` comments and
    strings. `comments=False` blanks literals only (for text whose comments were stripped already).
    A literal's first and last characters stay (its quotes); one left open ends with its line (a
    template literal with the text), a comment left open with the text. Newlines are kept, so line
    numbers and character offsets are those of `code`.
    """
    js = language == "js"
    starts, quotes = _STARTS[(js, comments)], "'\"`" if js else "'\""
    out: list[str] = []
    i, n = 0, len(code)
    last = ""  # the last significant character outside literals and comments
    while (start := starts.search(code, i)) is not None:
        k = start.start()
        out.append(code[i:k])
        last = code[i:k].rstrip()[-1:] or last
        char, following = code[k], code[k + 1:k + 2]
        if comments and char == "/" and (following == "*" or (js and following == "/")):
            end = code.find("\n" if following == "/" else "*/", k + 2)
            end = n if end < 0 else end + (following == "*") * 2
            out.append(_NOT_NEWLINE.sub(" ", code[k:end]))
        elif char in quotes or (js and char == "/" and _regex_may_start(code, k, last)):
            end = _literal_end(code, k)
            # The closing quote stays. A literal left open is blanked to its end, but in JavaScript its last
            # character stays too: the verifier's readings (and the warnings runs recorded) were made so.
            kept = max(k + 1, end - 1 if js or code[end - 1] == char else end)
            out += [char, _NOT_NEWLINE.sub(" ", code[k + 1:kept]), code[kept:end]]
            last = "x"
        else:  # a slash that divides
            out.append(char)
            last, end = char, k + 1
        i = end
    out.append(code[i:])
    return "".join(out)


def scan(masked: str, pattern: str = "", start: int = 0, *, brackets: str = "([{",
         clamp: bool = False) -> Iterator[tuple[int, str, int]]:
    """Each bracket of `masked` from `start` and each match of the regular expression `pattern`, in order,
    as (index, text, depth after it).

    Depth counts the opening brackets named in `brackets` (and their closing ones) since `start`: an
    opening bracket is inside itself, a closing one outside; below zero when more close than opened,
    unless `clamp` holds it at zero. `masked` is `mask`'s output, so brackets in literals do not count.
    `pattern` must not match a bracket, nor nothing.
    """
    opening, closers = set(brackets), {_CLOSERS[bracket] for bracket in brackets}
    tokens = "[" + re.escape("".join(sorted(opening | closers))) + "]"
    depth = 0
    for match in re.compile(f"{pattern}|{tokens}" if pattern else tokens).finditer(masked, start):
        token = match.group()
        if token in opening:
            depth += 1
        elif token in closers:
            depth = max(0, depth - 1) if clamp else depth - 1
        yield match.start(), token, depth


def closing(masked: str, opening: int) -> int:
    """The index of the bracket closing the one at `opening` (counting that kind only), or -1 if none does.

    Raises ValueError when `masked[opening]` is not an opening bracket.
    """
    if masked[opening] not in _CLOSERS:
        raise ValueError(f"no opening bracket at {opening} (found {masked[opening]!r})")
    return next((k for k, _, depth in scan(masked, start=opening, brackets=masked[opening]) if depth == 0), -1)


def _regex_may_start(code: str, i: int, last: str) -> bool:
    if last == "" or last in "(,=:[!&|?{};+-*%<>~^":
        return True
    word = re.search(r"([A-Za-z_$][\w$]*)\s*$", code[:i])
    return bool(word and word.group(1) in _REGEX_AFTER_WORDS)


def _literal_end(code: str, start: int) -> int:
    """Index just past the string, template or regex literal opening at `start`."""
    if code[start] != "/":
        return _string_end(code, start)
    i, n, in_class = start + 1, len(code), False
    while i < n:
        char = code[i]
        if char == "\\":
            i += 2
        elif char == "[" or char == "]":
            in_class, i = char == "[", i + 1
        elif char == "/" and not in_class:  # the end, then its flags
            return next((k for k in range(i + 1, n) if not (code[k].isalnum() or code[k] == "_")), n)
        elif char == "\n":
            return i  # not a regex after all (a division); stop at the line's end
        else:
            i += 1
    return n


def _string_end(code: str, start: int) -> int:
    """Index just past the string or template literal opening at `start`; one left open ends with its line
    (a template literal with the text)."""
    stops, i = _STRING_STOPS[code[start]], start + 1
    while (stop := stops.search(code, i)) is not None:
        token, i = stop.group(), stop.start()
        if token == "\\":
            i += 2
        elif token == "${":
            i = _substitution_end(code, i + 2)
        else:
            return i + 1 if token != "\n" else i
    return len(code)


def _substitution_end(code: str, i: int) -> int:
    """Index just past the `}` closing a template substitution whose code starts at `i`."""
    depth, n = 0, len(code)
    while i < n:
        char = code[i]
        if char in "'\"`":
            i = _string_end(code, i)
            continue
        if char == "{":
            depth += 1
        elif char == "}":
            if depth == 0:
                return i + 1
            depth -= 1
        i += 1
    return n
