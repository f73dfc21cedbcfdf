"""A static reading of a checker: does it look like it can never be true, whatever the page does?

Three kinds of sign, each a warning (recorded on the verdict and shown to the verifier in its
repair message) and never a proof or a rejection — only the replay of a solution proves:

- every `return` of the body returns a constant falsy value (`return false`, `0`, `null`, `''`);
- conditions that contradict each other: in a rule, whatever the rule compiler can see
  (`#a == 'x' AND #a == 'y'`, `X AND NOT X`, `#n > 5 AND #n < 3`, `NOT #a exists AND #a visible`,
  in every alternative of an OR); in JS, the same for `&&` chains of comparisons of one
  expression with literals (`x === 'a' && x === 'b'`, `n > 5 && n < 3`);
- an id or class the checker needs that appears nowhere in the HTML, its text or its scripts,
  and that the scripts cannot build from parts either (`'habit-' + id` builds `#habit-…`).
"""

from __future__ import annotations

import re

from source_scan import closing, mask, scan

from ._checker import FUNCTION_EXPRESSION, CompiledChecker, compile_checker
from ._rules import parse_rule
from ._static_logic import contradiction_in_rule, js_conjuncts_contradict

_NESTED_FUNCTION_BODY = re.compile(r"=>\s*\{|\bfunction\b\s*\*?\s*[\w$]*\s*\([^()]*\)\s*\{")
_CONSTANT_FALSY = re.compile(
    r"^(?:false|0|0\.0*|-0|0n|null|undefined|void\s*0|NaN|''|\"\"|``|!\s*1|!\s*true|!!\s*(?:0|false|null|''|\"\"))$"
    r"|^(?:false|0|null|undefined|''|\"\")\s*&&"
)
_NAME = re.compile(r"([#.])(-?[A-Za-z_][\w-]*)")


def static_warnings(checker: str | CompiledChecker, html: str) -> list[str]:
    """Reasons to think `checker` can never be true on `html`; empty when nothing is seen.

    Never raises: a checker that does not compile has nothing to read statically (the gate says why).
    """
    try:
        compiled = checker if isinstance(checker, CompiledChecker) else compile_checker(checker)
    except ValueError:  # RuleSyntaxError is one
        return []
    warnings: list[str] = []
    if compiled.kind == "rule":  # compiled, so it parses
        if found := contradiction_in_rule(parse_rule(compiled.source)):
            warnings.append(f"the rule can never be true: {found}")
    else:
        returns = top_level_returns(_function_body(compiled.source))
        if returns and all(not expression or _CONSTANT_FALSY.search(expression) for expression in returns):
            shown = ", ".join(sorted({f"`return {e}`" if e else "a bare `return` (a line break after it ends the statement)" for e in returns}))
            warnings.append(f"every return of the checker gives a constant falsy value ({shown}), so it can never be true")
        elif found := next(filter(None, (js_conjuncts_contradict(_conjuncts(e)) for e in returns)), None):
            warnings.append(f"the checker can never be true: {found}")  # the first return that cannot be
    warnings.extend(absent_names(compiled.selectors, html))
    return warnings


def _function_body(source: str) -> str:
    """The body the checker runs: a whole function sent as a checker is unwrapped (`() => x` → `return x`)."""
    text = source.strip().rstrip(";")
    head = FUNCTION_EXPRESSION.match(text)
    if not head:
        return source
    rest = text[head.end():].strip()
    if head.group("wrapped") and rest.endswith(")"):
        rest = rest[:-1].rstrip()
    if rest.startswith("{") and rest.endswith("}"):
        return rest[1:-1]
    return f"return {rest};"


def top_level_returns(body: str) -> list[str]:
    """The expressions of the `return` statements of `body` itself (not of functions inside it).

    `return` alone, or followed by a line break (JavaScript then returns undefined), gives "".
    """
    masked = _blank_nested_functions(mask(body))
    expressions = []
    for match in re.finditer(r"\breturn\b", masked):
        start = match.end()
        end = _statement_end(masked, start)
        gap = masked[start:end]
        if not gap.strip() or gap[: len(gap) - len(gap.lstrip())].count("\n"):
            expressions.append("")
            continue
        expressions.append(_strip_parentheses(body[start:end].strip()))
    return expressions


def _blank_nested_functions(masked: str) -> str:
    out = list(masked)
    for match in _NESTED_FUNCTION_BODY.finditer(masked):
        brace = match.end() - 1
        if out[brace] != "{":  # already blanked: inside an outer nested function
            continue
        close = closing(masked, brace)
        end = close + 1 if close >= 0 else len(masked)
        out[brace:end] = re.sub(r"[^\n]", " ", masked[brace:end])
    return "".join(out)


def _statement_end(masked: str, start: int) -> int:
    """Where the statement from `start` ends: its `;`, or the bracket closing the block around it."""
    return next((k for k, token, depth in scan(masked, ";", start) if depth < 0 or (depth == 0 and token == ";")),
                len(masked))


def _strip_parentheses(expression: str) -> str:
    while (expression.startswith("(") and expression.endswith(")")
           and closing(mask(expression), 0) == len(expression) - 1):
        expression = expression[1:-1].strip()
    return expression


def _conjuncts(expression: str) -> list[str]:
    """The operands of the top-level `&&` chain of `expression` (the whole of it when there is none)."""
    parts, start = [], 0
    for k, token, depth in scan(mask(expression), r"&&|\|\|"):
        if depth == 0 and token == "||":
            return []  # an OR at the top: the chain is not a conjunction
        if depth == 0 and token == "&&":
            parts.append(expression[start:k].strip())
            start = k + 2
    parts.append(expression[start:].strip())
    return [_strip_parentheses(part) for part in parts]


def absent_names(selectors: list[str], html: str) -> list[str]:
    """Warnings for the ids and classes in `selectors` that nothing in `html` could ever produce."""
    first_named: dict[tuple[str, str], str] = {}  # (prefix, name) → the first selector naming it
    for selector in selectors:
        for found in _NAME.findall(_outside_brackets(selector)):
            first_named.setdefault(found, selector)
    return [f"selector '{selector}' needs the {'id' if prefix == '#' else 'class'} '{name}', which appears nowhere in "
            "the app's HTML or scripts (nor can its scripts build it from parts), so it can never match"
            for (prefix, name), selector in first_named.items() if not _can_appear(name, html)]


def _outside_brackets(selector: str) -> str:
    """`selector` without attribute tests, pseudo-class arguments and quoted text (`:not(.x)` needs no .x)."""
    text = re.sub(r"'(?:\\.|[^'\\])*'|\"(?:\\.|[^\"\\])*\"", " ", selector)
    previous = None
    while previous != text:
        previous, text = text, re.sub(r"\[[^\[\]]*\]|\([^()]*\)", " ", text)
    return text


def _can_appear(name: str, html: str) -> bool:
    if re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", html):
        return True
    # Built from parts: 'habit-' + id, `${kind}-done`, 'cell' + i, `row${n}`.
    for head, tail in _splits(name):
        if len(head) >= 2 and re.search(rf"{re.escape(head)}(?:['\"`]|\$\{{)", html):
            return True
        if len(tail) >= 2 and re.search(rf"['\"`}}]{re.escape(tail)}", html):
            return True
    return False


def _splits(name: str) -> list[tuple[str, str]]:
    """Where a script might have joined `name` from two parts: keeping a - or _ on both sides
    (`habit-` + …, … + `-done`), or between letters and digits (`cell` + 3)."""
    return [(name[: k + 1], name[k:]) for k in range(1, len(name) - 1) if name[k] in "-_"] + [
        (name[:k], name[k:]) for k in range(1, len(name))
        if name[k - 1].isdigit() != name[k].isdigit() and name[k - 1] not in "-_" and name[k] not in "-_"]
