"""The rule language of the AUI reference code, parsed and compiled to a JS checker body.

Grammar (keywords are case-insensitive; AND binds tighter than OR; NOT tighter than AND):

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
The first element matching the selector is read. A missing element (or a null subject) makes
every comparison false — including `!=`, so a rule cannot turn true because an element vanished;
write `NOT (... == ...)` when absence should count.

Comparisons: `==`/`!=` with a string compare strings exactly (case-sensitive); with a number
they compare numerically. `> < >= <=` are numeric: the subject's first number is used ("Score:
12" → 12, "$1,234.50" → 1234.5); a subject without a number makes them false.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Union

from pydantic import BaseModel

KEYWORDS = {"and", "or", "not", "text", "value", "count", "exists", "visible", "checked", "contains", "startswith", "endswith"}
UNARY_TESTS = ("exists", "visible", "checked")
STRING_TESTS = ("contains", "startswith", "endswith")
COMPARISONS = ("==", "!=", ">=", "<=", ">", "<")


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
        elif char in "<>":
            tokens.append(Token("op", char, i))
            i += 1
        elif char == "=":  # a lone '=' is a common slip for '=='
            tokens.append(Token("op", "==", i))
            i += 1
        elif char in "()":
            tokens.append(Token("lparen" if char == "(" else "rparen", char, i))
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
                value = _number_in(value)
                if value is None:
                    raise self.fail(f"'{test}' compares numbers; the value is not a number", literal)
            return Condition(selector, reading, attribute, test, value)
        raise self.fail("expected a test: ==, !=, >, <, >=, <=, contains, startswith, endswith, exists, visible or checked")

    def literal(self) -> Token:
        if self.current.kind in ("string", "number"):
            return self.advance()
        raise self.fail("expected a quoted string or a number")


def _number_in(text: str) -> float | None:
    match = re.search(r"-?\d[\d,]*\.?\d*|-?\.\d+", text)
    if not match:
        return None
    try:
        return float(match.group(0).replace(",", ""))
    except ValueError:
        return None


def parse_rule(rule: str) -> Node:
    """The syntax tree of `rule`; raises RuleSyntaxError naming the position of the problem."""
    return _Parser(rule).parse()


# --- compiling to JS ---------------------------------------------------------------------

# Helpers the compiled expression calls. Kept in the body (not a shared library) so a compiled
# rule is a self-contained checker, the same kind of string an LLM writes.
_PRELUDE = r"""const __q = (s) => document.querySelector(s);
const __text = (e) => (e.textContent || '').replace(/\s+/g, ' ').trim();
const __read = (s, how, attr) => {
  if (how === 'count') return document.querySelectorAll(s).length;
  const e = __q(s);
  if (!e) return null;
  if (how === 'attr') return e.getAttribute(attr);
  if (how === 'text') return __text(e);
  const isControl = e instanceof HTMLInputElement || e instanceof HTMLTextAreaElement || e instanceof HTMLSelectElement;
  if (how === 'value') return isControl ? String(e.value) : null;
  return isControl ? String(e.value) : __text(e);
};
const __num = (v) => {
  if (v === null || v === undefined) return null;
  if (typeof v === 'number') return v;
  const m = String(v).match(/-?\d[\d,]*\.?\d*|-?\.\d+/);
  if (!m) return null;
  const n = parseFloat(m[0].replace(/,/g, ''));
  return Number.isNaN(n) ? null : n;
};
const __visible = (s) => {
  const e = __q(s);
  if (!e) return false;
  const r = e.getBoundingClientRect();
  if (r.width <= 0 || r.height <= 0) return false;
  if (typeof e.checkVisibility === 'function') return e.checkVisibility({checkOpacity: true, checkVisibilityCSS: true});
  const st = getComputedStyle(e);
  return st.display !== 'none' && st.visibility !== 'hidden' && Number(st.opacity) > 0;
};
const __cmp = (a, op, b) => {
  if (a === null) return false;
  if (typeof b === 'number') {
    const n = __num(a);
    if (n === null) return false;
    switch (op) { case '==': return n === b; case '!=': return n !== b; case '>': return n > b;
      case '<': return n < b; case '>=': return n >= b; case '<=': return n <= b; }
  }
  const t = String(a);
  switch (op) {
    case '==': return t === b; case '!=': return t !== b;
    case 'contains': return t.includes(b); case 'startswith': return t.startsWith(b); case 'endswith': return t.endsWith(b);
  }
  return false;
};
"""


def css_selector(selector: str) -> str:
    """The rule's selector as valid CSS: ids and classes escaped (`#1st` → `#\\31 st`)."""
    parts = re.findall(r"([#.])((?:\\.|[^#.\\])+)", selector)
    return "".join(prefix + css_identifier(name.replace("\\", "")) for prefix, name in parts)


def css_identifier(ident: str) -> str:
    """`ident` escaped for use after `#` or `.` in CSS (a leading digit becomes `\\3N `)."""
    out = []
    for index, char in enumerate(ident):
        if char.isdigit() and (index == 0 or (index == 1 and ident[0] == "-")):
            out.append(f"\\{ord(char):x} ")
        elif re.match(r"[A-Za-z0-9_\-]", char) or ord(char) > 0x7F:
            out.append(char)
        else:
            out.append("\\" + char)
    return "".join(out)


def _expression(node: Node) -> str:
    if isinstance(node, Logical):
        return "(" + f" {node.operator} ".join(_expression(o) for o in node.operands) + ")"
    if isinstance(node, Not):
        return f"!{_expression(node.operand)}"
    selector = json.dumps(css_selector(node.selector))
    if node.test == "exists" and node.reading == "attr":
        return f"(__q({selector})?.hasAttribute({json.dumps(node.attribute)}) === true)"
    if node.test == "exists":
        return f"(__q({selector}) !== null)"
    if node.test == "visible":
        return f"__visible({selector})"
    if node.test == "checked":
        return f"(__q({selector})?.checked === true)"
    subject = f"__read({selector}, {json.dumps(node.reading)}, {json.dumps(node.attribute)})"
    return f"__cmp({subject}, {json.dumps(node.test)}, {json.dumps(node.literal)})"


class CompiledRule(BaseModel):
    """A rule and the checker body it compiled to, with the CSS selectors it reads."""

    rule: str
    javascript: str
    selectors: list[str]


def compile_rule(rule: str) -> CompiledRule:
    """Compile a rule string to a JS function body returning a boolean.

    Raises:
        RuleSyntaxError: the rule does not parse (the message shows the position).
    """
    tree = parse_rule(rule)
    selectors: list[str] = []
    _collect_selectors(tree, selectors)
    return CompiledRule(rule=rule, javascript=f"{_PRELUDE}return {_expression(tree)};", selectors=selectors)


def _collect_selectors(node: Node, into: list[str]) -> None:
    if isinstance(node, Logical):
        for operand in node.operands:
            _collect_selectors(operand, into)
    elif isinstance(node, Not):
        _collect_selectors(node.operand, into)
    else:
        css = css_selector(node.selector)
        if css not in into:
            into.append(css)


def looks_like_rule(text: str) -> bool:
    """Whether a checker string is written in the rule language rather than as a JS body.

    A JS function body cannot start with `#` or `.`, and a rule never contains `return`,
    `;` or `document`; anything else is tried as a rule only if it parses.
    """
    stripped = text.strip()
    if not stripped or re.search(r"\breturn\b|;|\bdocument\b|=>|\{", stripped):
        return False
    if stripped[0] in "#." or re.match(r"(?i)not\s", stripped):
        return True
    try:
        parse_rule(stripped)
    except RuleSyntaxError:
        return False
    return True
