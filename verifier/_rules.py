"""The rule language of the AUI reference code: tokenizer and parser (`_rules_js` compiles it).

Grammar (keywords are case-insensitive; AND binds tighter than OR; NOT tighter than AND;
`&&`, `||` and a lone `=` are accepted for AND, OR and `==`):

    rule       := or_expr
    or_expr    := and_expr ("OR" and_expr)*
    and_expr   := not_expr ("AND" not_expr)*
    not_expr   := "NOT" not_expr | "(" or_expr ")" | condition
    condition  := selector reading? test
    selector   := one or more of  #id  .class  (glued, no spaces: `#list.done`)
    reading    := "text" | "value" | "count" | "[" attribute-name "]"
    test       := "exists" | "visible" | "checked"       (after [attr], `exists`: attribute present)
                | ("==" | "!=") literal
                | ("contains" | "startswith" | "endswith") literal
                | (">" | "<" | ">=" | "<=") literal
    literal    := 'single' or "double" quoted string (backslash escapes) | number

What a condition reads (the subject):
  - no reading: the element's *value* if it is an <input>, <textarea> or <select>, else its text;
  - `text`: the element's text (textContent with runs of whitespace collapsed, trimmed) — never
    an input's value, which is not part of the DOM's text;
  - `value`: the `.value` property of a form control (null for other elements);
  - `[attr]`: the attribute's value (null when absent); `count`: how many elements match.
`visible`: the element exists, has a non-empty box, and is not hidden by display, visibility or
opacity 0 (scrolled out of view still counts as visible). `checked`: a checked box or radio.
The first element matching the selector is read. A missing element (or a null subject) makes
every comparison false — including `!=`, so a rule cannot turn true because an element vanished;
write `NOT (... == ...)` when absence should count.

Comparisons: `==`/`!=` with a string compare strings exactly (case-sensitive); with a number
they compare numerically. `> < >= <=` are numeric: the subject's first number is used ("Score:
12" → 12, "$1,234.50" → 1234.5); a subject without a number makes them false.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Union

UNARY_TESTS = ("exists", "visible", "checked")
STRING_TESTS = ("contains", "startswith", "endswith")


class RuleSyntaxError(ValueError):
    """A rule that does not parse; `position` is the 0-based character offset of the problem."""

    def __init__(self, rule: str, position: int, message: str):
        self.rule, self.position, self.detail = rule, position, message
        pointer = " " * position + "^"
        super().__init__(f"rule syntax error at position {position}: {message}\n  {rule}\n  {pointer}")


@dataclass(frozen=True)
class Token:
    kind: str  # selector | string | number | op | lparen | rparen | attribute | word | end
    text: str
    position: int
    value: object = None


_SELECTOR = re.compile(r"(?:[#.](?:[A-Za-z0-9_\-]|\\.|[^\x00-\x7f])+)+")
_NUMBER = re.compile(r"-?(?:\d+\.?\d*|\.\d+)")
_WORD = re.compile(r"[A-Za-z_]+")
_ATTRIBUTE = re.compile(r"\[\s*([A-Za-z_:][A-Za-z0-9_:.\-]*)\s*\]")
# (kind, text) of the tokens one character makes; a lone '=' is a common slip for '=='
_ONE_CHARACTER = {"<": ("op", "<"), ">": ("op", ">"), "=": ("op", "=="), "(": ("lparen", "("), ")": ("rparen", ")")}


def tokenize(rule: str) -> list[Token]:
    """Split a rule into tokens; raises RuleSyntaxError at the first character that fits none."""
    tokens: list[Token] = []
    i = 0
    while i < len(rule):
        char = rule[i]
        if char.isspace():
            i += 1
            continue
        if char in "#." and (match := _SELECTOR.match(rule, i)) and not _NUMBER.match(rule, i):
            tokens.append(Token("selector", match.group(0), i))
            i = match.end()
        elif char == "[":
            match = _ATTRIBUTE.match(rule, i)
            if not match:
                raise RuleSyntaxError(rule, i, "expected an attribute name in brackets, e.g. [aria-pressed]")
            tokens.append(Token("attribute", match.group(0), i, match.group(1)))
            i = match.end()
        elif char in "'\"":
            value, end = _read_string(rule, i)
            tokens.append(Token("string", rule[i:end], i, value))
            i = end
        elif match := _NUMBER.match(rule, i):
            tokens.append(Token("number", match.group(0), i, float(match.group(0))))
            i = match.end()
        elif rule.startswith(("==", "!=", ">=", "<="), i):
            tokens.append(Token("op", rule[i : i + 2], i))
            i += 2
        elif char in _ONE_CHARACTER:
            tokens.append(Token(*_ONE_CHARACTER[char], i))
            i += 1
        elif match := _WORD.match(rule, i):
            tokens.append(Token("word", match.group(0), i, match.group(0).lower()))
            i = match.end()
        elif rule.startswith(("&&", "||"), i):
            tokens.append(Token("word", rule[i : i + 2], i, "and" if char == "&" else "or"))
            i += 2
        else:
            raise RuleSyntaxError(rule, i, f"unexpected character {char!r}")
    tokens.append(Token("end", "", len(rule)))
    return tokens


def _read_string(rule: str, start: int) -> tuple[str, int]:
    quote = rule[start]
    out: list[str] = []
    i = start + 1
    while i < len(rule):
        char = rule[i]
        if char == "\\" and i + 1 < len(rule):
            out.append(rule[i + 1])
            i += 2
        elif char == quote:
            return "".join(out), i + 1
        else:
            out.append(char)
            i += 1
    raise RuleSyntaxError(rule, start, "string is not closed")


# --- syntax tree -------------------------------------------------------------------------


@dataclass(frozen=True)
class Condition:
    selector: str  # as written, e.g. "#score"
    reading: str  # auto | text | value | count | attr
    attribute: str | None
    test: str  # exists | visible | checked | == | != | > | < | >= | <= | contains | startswith | endswith
    literal: str | float | None = None


@dataclass(frozen=True)
class Not:
    operand: "Node"


@dataclass(frozen=True)
class Logical:
    operator: str  # "&&" | "||"
    operands: tuple["Node", ...] = field(default_factory=tuple)


Node = Union[Condition, Not, Logical]


class _Parser:
    def __init__(self, rule: str):
        self.rule = rule
        self.tokens = tokenize(rule)
        self.index = 0

    @property
    def current(self) -> Token:
        return self.tokens[self.index]

    def advance(self) -> Token:
        token = self.tokens[self.index]
        self.index += 1
        return token

    def is_word(self, *words: str) -> bool:
        return self.current.kind == "word" and self.current.value in words

    def fail(self, message: str, token: Token | None = None) -> RuleSyntaxError:
        token = token or self.current
        found = "the end of the rule" if token.kind == "end" else repr(token.text)
        return RuleSyntaxError(self.rule, token.position, f"{message}, found {found}")

    def parse(self) -> Node:
        if self.current.kind == "end":
            raise RuleSyntaxError(self.rule, 0, "empty rule")
        node = self.or_expr()
        if self.current.kind != "end":
            raise self.fail("expected AND, OR or the end of the rule")
        return node

    def or_expr(self) -> Node:
        operands = [self.and_expr()]
        while self.is_word("or"):
            self.advance()
            operands.append(self.and_expr())
        return operands[0] if len(operands) == 1 else Logical("||", tuple(operands))

    def and_expr(self) -> Node:
        operands = [self.not_expr()]
        while self.is_word("and"):
            self.advance()
            operands.append(self.not_expr())
        return operands[0] if len(operands) == 1 else Logical("&&", tuple(operands))

    def not_expr(self) -> Node:
        if self.is_word("not"):
            self.advance()
            return Not(self.not_expr())
        if self.current.kind == "lparen":
            opening = self.advance()
            node = self.or_expr()
            if self.current.kind != "rparen":
                raise self.fail(f"expected ')' to close the '(' at position {opening.position}")
            self.advance()
            return node
        return self.condition()

    def condition(self) -> Condition:
        if self.current.kind != "selector":
            raise self.fail("expected a selector such as #id or .class, '(' or NOT")
        selector = self.advance().text
        reading, attribute = "auto", None
        if self.current.kind == "attribute":
            reading, attribute = "attr", str(self.advance().value)
        elif self.is_word("text", "value", "count"):
            reading = str(self.advance().value)
        if self.is_word(*UNARY_TESTS):
            test_token = self.advance()
            test = str(test_token.value)
            allowed = ("auto", "attr") if test == "exists" else ("auto",)
            if reading not in allowed:
                raise self.fail(f"'{test}' applies to an element, not to its {reading}", test_token)
            return Condition(selector, reading, attribute, test)
        if self.is_word(*STRING_TESTS):
            test = str(self.advance().value)
            literal = self.literal()
            # `contains 5` means the characters "5", exactly as written.
            return Condition(selector, reading, attribute, test, literal.text if literal.kind == "number" else literal.value)
        if self.current.kind == "op":
            test = self.advance().text
            literal = self.literal()
            value = literal.value
            if test in (">", "<", ">=", "<=") and isinstance(value, str):
                value = number_in(value)
                if value is None:
                    raise self.fail(f"'{test}' compares numbers; the value is not a number", literal)
            return Condition(selector, reading, attribute, test, value)
        raise self.fail("expected a test: ==, !=, >, <, >=, <=, contains, startswith, endswith, exists, visible or checked")

    def literal(self) -> Token:
        if self.current.kind in ("string", "number"):
            return self.advance()
        raise self.fail("expected a quoted string or a number")


def number_in(text: str) -> float | None:
    """The first number in `text` ("$1,234.50" → 1234.5), as the compiled rules read it."""
    match = re.search(r"-?\d[\d,]*\.?\d*|-?\.\d+", text)
    return float(match.group(0).replace(",", "")) if match else None


def parse_rule(rule: str) -> Node:
    """The syntax tree of `rule`; raises RuleSyntaxError naming the position of the problem."""
    return _Parser(rule).parse()


def looks_like_rule(text: str) -> bool:
    """Whether a checker string is written in the rule language rather than as a JS body.

    A JS function body cannot start with `#`, `.` or `NOT `; a rule never contains `return`, `;`,
    `document`, `=>` or `{` outside its quoted strings. Anything else counts as a rule only
    if it parses as one.
    """
    stripped = text.strip()
    if not stripped:
        return False
    if stripped[0] in "#.":
        return True
    unquoted = re.sub(r"'(?:\\.|[^'\\])*'|\"(?:\\.|[^\"\\])*\"", "''", stripped)
    if re.search(r"\breturn\b|;|\bdocument\b|=>|\{", unquoted):
        return False
    if re.match(r"(?i)not[\s(]", stripped):
        return True
    try:
        parse_rule(stripped)
    except RuleSyntaxError:
        return False
    return True
