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
from collections.abc import Callable
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


# One alternative per kind of token, tried in order (a number before a selector: `.5` is a number).
_TOKEN = re.compile(
    r"""(?P<space>\s+)|(?P<number>-?(?:\d+\.?\d*|\.\d+))|(?P<selector>(?:[#.](?:[A-Za-z0-9_\-]|\\.|[^\x00-\x7f])+)+)
    |(?P<attribute>\[\s*[A-Za-z_:][A-Za-z0-9_:.\-]*\s*\])|(?P<string>'(?:\\[\s\S]|[^'\\])*'|"(?:\\[\s\S]|[^"\\])*")
    |(?P<op>[=!<>]=|[<>=])|(?P<lparen>\()|(?P<rparen>\))|(?P<word>[A-Za-z_]+|&&|\|\|)""",
    re.VERBOSE,
)
_VALUES = {
    "number": float,
    "attribute": lambda text: text[1:-1].strip(),
    "string": lambda text: re.sub(r"\\([\s\S])", r"\1", text[1:-1]),  # a backslash escapes the next character
    "word": lambda text: {"&&": "and", "||": "or"}.get(text, text.lower()),
}


def tokenize(rule: str) -> list[Token]:
    """Split a rule into tokens; raises RuleSyntaxError at the first character that fits none."""
    tokens: list[Token] = []
    i = 0
    while i < len(rule):
        match = _TOKEN.match(rule, i)
        if match is None:
            if rule[i] == "[":
                raise RuleSyntaxError(rule, i, "expected an attribute name in brackets, e.g. [aria-pressed]")
            problem = "string is not closed" if rule[i] in "'\"" else f"unexpected character {rule[i]!r}"
            raise RuleSyntaxError(rule, i, problem)
        kind, text = str(match.lastgroup), match.group()
        if kind != "space":
            text = "==" if text == "=" else text  # a lone '=' is a common slip for '=='
            tokens.append(Token(kind, text, i, _VALUES[kind](text) if kind in _VALUES else None))
        i = match.end()
    tokens.append(Token("end", "", len(rule)))
    return tokens


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
        return self.chain("or", self.and_expr)

    def and_expr(self) -> Node:
        return self.chain("and", self.not_expr)

    def chain(self, word: str, operand: Callable[[], Node]) -> Node:
        """`operand (word operand)*`: one operand alone, or their Logical ('and' → &&, 'or' → ||)."""
        operands = [operand()]
        while self.is_word(word):
            self.advance()
            operands.append(operand())
        return operands[0] if len(operands) == 1 else Logical("&&" if word == "and" else "||", tuple(operands))

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
