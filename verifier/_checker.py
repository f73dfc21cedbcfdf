"""One notion of a checker, whichever way it was written: a JS function body or a rule string.

Both become the JS body the runtime evaluates; alongside we keep the selectors the checker names
(exactly, for a rule; found by reading the source, for JS) so the gate can see whether they exist.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, Field

from ._rules import looks_like_rule
from ._rules_js import compile_rule, css_identifier

MAX_CHECKER_CHARS = 20_000
"""Longer than any honest DOM check; a bigger reply is a pasted app or a runaway generation."""

CheckerKind = Literal["js", "rule"]

# DOM lookups with a literal argument: `querySelector('#a')`, `getElementById("a")`, ...
_LOOKUP = re.compile(
    r"""\b(querySelector|querySelectorAll|getElementById|getElementsByClassName|closest)\s*\(\s*(['"`])((?:\\.|(?!\2).)*?)\2\s*\)""",
    re.DOTALL,
)
FUNCTION_EXPRESSION = re.compile(r"^(?P<wrapped>\()?\s*(?:function\s*[\w$]*\s*\(\s*\)\s*|\(\s*\)\s*=>\s*)")
_WINDOW_NAME = re.compile(r"\bwindow\s*\.\s*([A-Za-z_$][\w$]*)|\bwindow\s*\[\s*(['\"])([^'\"]+)\2\s*\]")


class CompiledChecker(BaseModel):
    """A checker ready to run: its source as written, its kind, and the JS body that runs."""

    source: str
    kind: CheckerKind
    javascript: str
    selectors: list[str] = Field(default_factory=list, description="CSS selectors the checker names.")
    window_names: list[str] = Field(default_factory=list, description="`window.X` properties the checker reads.")


def compile_checker(source: str, kind: CheckerKind | None = None) -> CompiledChecker:
    """Compile a checker; `kind=None` tells a rule from a JS body by its shape.

    Raises:
        RuleSyntaxError: a rule (given or detected) that does not parse.
        ValueError: the checker is empty or longer than MAX_CHECKER_CHARS.
    """
    text = source.strip()
    if not text:
        raise ValueError("the checker is empty")
    if len(text) > MAX_CHECKER_CHARS:
        raise ValueError(f"the checker is {len(text)} characters long; the limit is {MAX_CHECKER_CHARS}")
    if kind is None:
        kind = "rule" if looks_like_rule(text) else "js"
    if kind == "rule":
        rule = compile_rule(text)
        return CompiledChecker(source=text, kind="rule", javascript=rule.javascript, selectors=rule.selectors)
    # Models often send a whole function (`() => ...`, `function () {...}`) where a body belongs;
    # calling it is what they meant, and saves a repair round-trip.
    javascript = f"return ({text.rstrip(';')})();" if FUNCTION_EXPRESSION.match(text) else text
    return CompiledChecker(
        source=text, kind="js", javascript=javascript, selectors=selectors_named(text), window_names=window_names(text)
    )


def selectors_named(javascript: str) -> list[str]:
    """CSS selectors passed as literals to DOM lookups in a JS body (template literals with `${` skipped)."""
    found: list[str] = []
    for match in _LOOKUP.finditer(javascript):
        function, _quote, argument = match.groups()
        if "${" in argument or not argument.strip():
            continue
        argument = argument.replace("\\'", "'").replace('\\"', '"')
        if function == "getElementById":
            found.append("#" + css_identifier(argument))
        elif function == "getElementsByClassName":
            found.append("".join("." + css_identifier(name) for name in argument.split()))
        else:
            found.append(argument)
    return list(dict.fromkeys(found))  # in order, each once


def window_names(javascript: str) -> list[str]:
    """Names read as `window.X` / `window['X']`: app globals if the isolated world lacks them."""
    return list(dict.fromkeys(name for match in _WINDOW_NAME.finditer(javascript)
                              if (name := match.group(1) or match.group(3))))
