"""Contradictions the rule compiler can see: a rule whose every alternative asks for the impossible.

A rule is brought to disjunctive normal form (an OR of AND-ed conditions, each possibly negated;
bounded, so a huge rule is simply not judged), and each conjunction is checked for conditions
that cannot hold together under the rule language's own semantics (see `_rules`):
`X AND NOT X`; one subject equal to two strings; a fixed string and a test it fails; numeric
bounds with nothing between them; an element that must be missing (`NOT #a exists`) and yet is
read. The same interval check serves JS `&&` chains of comparisons of one expression with literals.
"""

from __future__ import annotations

import json
import math
import operator
import re
from dataclasses import dataclass, field

from source_scan import mask, scan

from ._rules import STRING_TESTS, UNARY_TESTS, Condition, Node, Not, number_in
from ._rules_js import css_selector

MAX_CONJUNCTIONS = 64
NUMERIC_TESTS = ("==", "!=", ">", "<", ">=", "<=")
_NEGATED = {"==": "!=", "!=": "==", ">": "<=", "<": ">=", ">=": "<", "<=": ">"}
_OPERATORS = {"==": operator.eq, "!=": operator.ne, ">": operator.gt, "<": operator.lt, ">=": operator.ge,
              "<=": operator.le, "contains": operator.contains, "startswith": str.startswith, "endswith": str.endswith}

Literal = tuple[bool, Condition]  # (positive?, condition)


def contradiction_in_rule(tree: Node) -> str | None:
    """Why the rule can never be true, or None (also when it is too big to judge)."""
    conjunctions = _dnf(tree, positive=True)
    if not conjunctions:
        return None
    reasons = [_conjunction_contradiction(conjunction) for conjunction in conjunctions]
    if None in reasons:
        return None
    return reasons[0] if len(reasons) == 1 else "every alternative is impossible: " + "; ".join(dict.fromkeys(reasons))


def _dnf(node: Node, positive: bool) -> list[list[Literal]] | None:
    if isinstance(node, Condition):
        return [[(positive, node)]]
    if isinstance(node, Not):
        return _dnf(node.operand, not positive)
    # De Morgan: under a NOT, AND becomes OR and OR becomes AND.
    is_or = (node.operator == "||") == positive
    parts = [_dnf(operand, positive) for operand in node.operands]
    if any(part is None for part in parts):
        return None
    if is_or:
        joined = [conjunction for part in parts for conjunction in part]
        return joined if len(joined) <= MAX_CONJUNCTIONS else None
    product: list[list[Literal]] = [[]]
    for part in parts:
        product = [left + right for left in product for right in part]
        if len(product) > MAX_CONJUNCTIONS:
            return None
    return product


def describe(literal: Literal) -> str:
    positive, c = literal
    reading = {"auto": "", "text": " text", "value": " value", "count": " count", "attr": f"[{c.attribute}]"}[c.reading]
    if c.test in UNARY_TESTS:
        text = f"{c.selector}{reading} {c.test}"
    else:
        shown = json.dumps(c.literal) if isinstance(c.literal, str) else f"{c.literal:g}"
        text = f"{c.selector}{reading} {c.test} {shown}"
    return text if positive else f"NOT {text}"


def _conjunction_contradiction(conjunction: list[Literal]) -> str | None:
    seen = set()
    for positive, condition in conjunction:
        if (not positive, condition) in seen:
            return f"'{describe((True, condition))}' AND 'NOT {describe((True, condition))}'"
        seen.add((positive, condition))
    # subject → (positive, condition, the literal as written that asks for it)
    subjects: dict[tuple, list[tuple[bool, Condition, str]]] = {}
    for literal in conjunction:
        positive, c = literal
        written, count = describe(literal), (css_selector(c.selector), "count", None)
        if c.test == "exists" and c.reading != "attr" and not positive:  # NOT #a exists: no element at all
            subjects.setdefault(count, []).append((True, Condition(c.selector, "count", None, "<=", 0.0), written))
        if positive and c.reading != "count":  # every positive test of an element needs it
            subjects.setdefault(count, []).append((True, Condition(c.selector, "count", None, ">=", 1.0), written))
        if c.test not in UNARY_TESTS:
            subjects.setdefault((css_selector(c.selector), c.reading, c.attribute), []).append((positive, c, written))
    return next(filter(None, map(_subject_contradiction, subjects.values())), None)


def _subject_contradiction(literals: list[tuple[bool, Condition, str]]) -> str | None:
    shown = " AND ".join(f"'{written}'" for written in dict.fromkeys(written for _, _, written in literals))
    fixed = [c.literal for positive, c, _ in literals if positive and c.test == "==" and isinstance(c.literal, str)]
    if fixed:
        value = fixed[0]
        for positive, c, _ in literals:  # each a comparison: the element tests went to its count
            if _compare(value, c.test, c.literal) != positive:
                return f"{shown} cannot all hold (the value would have to be {json.dumps(value)})"
        return None
    numeric = [(positive, c) for positive, c, _ in literals if c.test in NUMERIC_TESTS and isinstance(c.literal, float)]
    if not any(positive for positive, _ in numeric):
        return None  # nothing says the subject holds a number: a negated test alone is satisfiable
    interval = _Interval()
    for positive, c in numeric:
        interval.add(c.test if positive else _NEGATED[c.test], c.literal)
    if not interval.empty():
        return None
    if all(c.reading == "count" for _, c, _ in literals) and "exists" in shown:
        return f"{shown} cannot all hold (the element would have to be both present and missing)"
    return f"{shown} cannot all hold (no number satisfies them)"


def _compare(value: str, test: str, literal: str | float | None) -> bool:
    """The rule runtime's `__cmp` on a subject known to equal `value`."""
    if isinstance(literal, float):
        number = number_in(value)
        return number is not None and test in NUMERIC_TESTS and _OPERATORS[test](number, literal)
    return test in ("==", "!=", *STRING_TESTS) and _OPERATORS[test](value, str(literal))


@dataclass
class _Interval:
    """The numbers allowed by a set of comparisons: bounds, required values and excluded values."""

    low: float = -math.inf
    low_open: bool = False
    high: float = math.inf
    high_open: bool = False
    equal: set[float] = field(default_factory=set)
    unequal: set[float] = field(default_factory=set)

    def add(self, test: str, n: float) -> None:
        if test == "==":
            self.equal.add(n)
        elif test == "!=":
            self.unequal.add(n)
        elif test in (">", ">="):
            if n > self.low or (n == self.low and test == ">"):
                self.low, self.low_open = n, test == ">"
        elif n < self.high or (n == self.high and test == "<"):
            self.high, self.high_open = n, test == "<"

    def allows(self, n: float) -> bool:
        above = n > self.low or (n == self.low and not self.low_open)
        below = n < self.high or (n == self.high and not self.high_open)
        return above and below and n not in self.unequal

    def empty(self) -> bool:
        if len(self.equal) > 1:
            return True
        if self.equal:
            return not self.allows(next(iter(self.equal)))
        if self.low > self.high or (self.low == self.high and (self.low_open or self.high_open)):
            return True
        return self.low == self.high and self.low in self.unequal


# --- JS: `x === 'a' && x === 'b'`, `n > 5 && n < 3` ---------------------------------------------

_IMPURE = re.compile(r"\b(?:random|now|next|shift|pop|splice)\s*\(|\+\+|--")
_JS_OPERATORS = ("===", "!==", "==", "!=", ">=", "<=", ">", "<")
_JS_OPERATOR = "=>|" + "|".join(_JS_OPERATORS)  # an arrow first, then the longest operator that matches
_JS_STRING = re.compile(r"""^(['"])((?:\\.|(?!\1).)*)\1$""", re.DOTALL)
_JS_NUMBER = re.compile(r"^-?(?:\d+\.?\d*|\.\d+)$")
_FLIPPED = {">": "<", "<": ">", ">=": "<=", "<=": ">=", "===": "===", "!==": "!==", "==": "==", "!=": "!="}


def js_conjuncts_contradict(conjuncts: list[str]) -> str | None:
    """Why an `&&` chain of `expression OP literal` comparisons can never be true, or None.

    Only strict (in)equality and ordering with string or number literals are read: `x === 'a'`
    and `x === 'b'`, `x === 'a'` and `x !== 'a'`, `n > 5` and `n < 3` (ordering coerces to
    numbers, so whatever `n` is, they cannot both hold).
    """
    by_subject: dict[str, list[tuple[str, str | float, str]]] = {}
    for conjunct in conjuncts:
        parsed = _js_comparison(conjunct)
        if parsed:
            subject, op, literal = parsed
            by_subject.setdefault(subject, []).append((op, literal, conjunct))
    for comparisons in by_subject.values():
        shown = " && ".join(f"`{' '.join(text.split())[:120]}`" for _, _, text in comparisons)
        strict_equal = {literal for op, literal, _ in comparisons if op == "==="}
        if len(strict_equal) > 1:
            return f"{shown}: one value cannot strictly equal two different literals"
        if strict_equal & {literal for op, literal, _ in comparisons if op == "!=="}:
            return f"{shown}: a value cannot both equal and differ from the same literal"
        interval = _Interval()
        ordered = False
        for op, literal, _ in comparisons:
            if isinstance(literal, float) and op in (">", "<", ">=", "<="):
                interval.add(op, literal)
                ordered = True
            elif isinstance(literal, float) and op == "===":
                interval.add("==", literal)
        if ordered and interval.empty():
            return f"{shown}: no number satisfies these bounds"
    return None


def _js_comparison(conjunct: str) -> tuple[str, str, str | float] | None:
    text = conjunct.strip()
    found = _top_level_operator(text)
    if found is None:
        return None
    at, op = found
    left, right = text[:at].strip(), text[at + len(op):].strip()
    literal = _js_literal(right)
    if literal is None:
        literal, left, op = _js_literal(left), right, _FLIPPED[op]
        if literal is None:
            return None
    if _js_literal(left) is not None or re.search(r"&&|\|\||\?(?!\.)", mask(left)) or _IMPURE.search(left):
        return None  # a literal on both sides, a subject that is itself a condition, or one that changes per call
    return re.sub(r"\s+", "", left), op, literal


def _top_level_operator(text: str) -> tuple[int, str] | None:
    """The one comparison operator of `text` outside strings and brackets, or None (none, several, `=>`)."""
    found = []
    for k, token, depth in scan(mask(text), _JS_OPERATOR):
        if depth == 0 and token == "=>":
            return None  # an arrow function: not a plain comparison
        if depth == 0 and token in _JS_OPERATORS:
            found.append((k, token))
    return found[0] if len(found) == 1 else None


def _js_literal(text: str) -> str | float | None:
    string = _JS_STRING.match(text)
    if string:
        return string.group(2)
    if _JS_NUMBER.match(text):
        return float(text)
    return None
