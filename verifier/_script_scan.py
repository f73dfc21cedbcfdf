"""Reading an app's inline JavaScript without running it: its scripts and named functions, found in
`source_scan.mask`'s output (braces matched without being fooled by `'{'` or `// }`). Not a parser."""

from __future__ import annotations

import re
from dataclasses import dataclass

from bs4 import BeautifulSoup

from source_scan import closing, mask

_JS_TYPES = ("", "text/javascript", "application/javascript", "module")
_DEFINITIONS = (
    re.compile(r"\b(?:async\s+)?function\s*\*?\s*([A-Za-z_$][\w$]*)\s*\("),
    re.compile(r"\b(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*=\s*(?:async\s+)?(?:function\b|\([^()]*\)\s*=>|[A-Za-z_$][\w$]*\s*=>)"),
    re.compile(r"(?:^|[;{}\s])(?:window\.|this\.)?([A-Za-z_$][\w$]*)\s*=\s*(?:async\s+)?(?:function\b|\([^()]*\)\s*=>)"),
    # methods in classes and object literals: `save() {`, `async render(x) {`
    re.compile(r"(?:^|[;{},]\s*)(?:async\s+)?([A-Za-z_$][\w$]*)\s*\([^()]*\)\s*\{", re.MULTILINE),
)
_NOT_NAMES = {"if", "for", "while", "switch", "catch", "function", "return", "typeof", "new", "with", "else"}


def inline_scripts(soup: BeautifulSoup) -> list[str]:
    """The text of the page's own inline scripts, in order.

    Scripts with `src` cannot be read from the file; scripts marked `data-aui` are helpers the
    offline coder injects, which write only their own `aui-` elements, so both are left out.
    """
    return [
        script.string or script.get_text()
        for script in soup.find_all("script")
        if not script.get("src") and not script.has_attr("data-aui")
        and str(script.get("type") or "").strip().lower() in _JS_TYPES
    ]


@dataclass(frozen=True)
class FunctionSpan:
    """A named function (or method) and where its text lies in the script."""

    name: str
    start: int
    end: int


def function_spans(code: str, masked: str | None = None) -> list[FunctionSpan]:
    """Named functions of `code` with the span of their definition (through the closing brace).

    An arrow function without braces spans to the end of its line.
    """
    masked = mask(code) if masked is None else masked
    spans: dict[tuple[str, int], FunctionSpan] = {}
    for pattern in _DEFINITIONS:
        for match in pattern.finditer(masked):
            name = match.group(1)
            if name in _NOT_NAMES:
                continue
            spans.setdefault((name, match.start(1)), FunctionSpan(name, match.start(1), _body_end(masked, match.end())))
    return sorted(spans.values(), key=lambda span: (span.start, -span.end))


def _body_end(masked: str, i: int) -> int:
    """End of the body of the function whose definition's match ends at `i`."""
    line_end = masked.find("\n", i)
    line_end = len(masked) if line_end < 0 else line_end
    if masked[:i].rstrip().endswith("=>") and not masked[i:].lstrip().startswith("{"):
        return line_end  # an arrow function with an expression body
    brace = masked.rfind("{", 0, i) if masked[:i].rstrip().endswith("{") else masked.find("{", i)
    if brace < 0:
        return line_end
    close = closing(masked, brace)
    return close + 1 if close >= 0 else len(masked)
