"""Compiling a parsed rule (see `_rules`) to a checker body: self-contained JS returning a boolean."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

from pydantic import BaseModel

from ._rules import Condition, Logical, Node, Not, parse_rule

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
    selectors = list(dict.fromkeys(css_selector(condition.selector) for condition in _conditions(tree)))
    return CompiledRule(rule=rule, javascript=f"{_PRELUDE}return {_expression(tree)};", selectors=selectors)


def _conditions(node: Node) -> Iterator[Condition]:
    if isinstance(node, Logical):
        for operand in node.operands:
            yield from _conditions(operand)
    elif isinstance(node, Not):
        yield from _conditions(node.operand)
    else:
        yield node
