"""Revealing what only shows on hover (state visibility).

Rules like `.row:hover .tools {opacity: 1}` hide controls from any agent that does not hover
first. Two cases:

- the revealed element sits in the normal flow (row tools, captions): the rule becomes an
  always-on rule (`.row .tools {opacity: 1}`);
- it is positioned (a dropdown or tooltip over other content): always showing it could cover
  the controls below. A small script puts it into the flow when that fits (the host stays on
  screen and nothing is covered), else shows it in place when it covers no control, and
  otherwise leaves it as an overlay that a click on its host opens and closes (as do hover and
  keyboard focus).

Only rules whose `:hover` is on an ancestor or sibling and whose declarations show something are
touched; `button:hover {background: ...}` styling is left alone.
"""

from __future__ import annotations

import re
from pathlib import Path

from ._css import format_declarations, number, parse_declarations, parse_rules, split_selectors, walk_style_rules
from ._document import AppDocument, TransformOutcome, script_calling

_REVEAL_PROPERTIES = {"display", "visibility", "opacity", "max-height", "height", "transform", "pointer-events",
                      "clip-path", "clip"}
_COMBINATOR = re.compile(r"\s*[>+~]\s*|\s+")

# A function of the panels ([{host, target}] selectors), run once at load (see `script_calling`).
REVEAL_JS = Path(__file__).with_name("_reveal_hover.js").read_text(encoding="utf-8")


def reveal_hover(doc: AppDocument) -> TransformOutcome:
    """Make hover-only content visible (in-flow) or click-openable (overlays); see the module doc."""
    outcome = TransformOutcome()
    css = doc.app_css()
    rules = walk_style_rules(parse_rules(css))
    positioned = _positioned_compounds(css, rules)
    new_rules: list[str] = []
    panels: list[dict[str, str]] = []
    for rule in rules:
        reveal = [(n, v, True) for n, v, _ in parse_declarations(css[rule.body_start:rule.body_end])
                  if n in _REVEAL_PROPERTIES and _reveals(n, v)]
        if not reveal:
            continue
        for selector in split_selectors(rule.prelude):
            split = _split_at_hover(selector)
            if split is None:
                continue
            host, rest = split
            always = f"{host}{rest}"
            if _last_compound(always) not in positioned:
                new_rules.append(f"{always} {{{format_declarations(reveal)}}}")
                outcome.note(f"{selector} -> always {always}")
                continue
            inflow = f"{always}.aui-inflow"
            new_rules.append(f"{host}.aui-open{rest}, {host}:focus-within{rest}, {inflow}, {always}.aui-pinned "
                             f"{{{format_declarations(reveal)}}}")
            new_rules.append(f"{inflow} {{{format_declarations([('position', 'static', True), ('box-shadow', 'none', True)])}}}")
            new_rules.append(f"{host}.aui-closed{rest}:not(.aui-inflow):not(.aui-pinned) {{ display: none !important; }}")
            panels.append({"host": host, "target": always})
            outcome.note(f"{selector} -> in the flow when it fits, else opens on click of {host}")
    if new_rules:
        doc.inject_style("reveal_hover", "/* aui: shown without hovering */\n" + "\n".join(new_rules) + "\n")
    if panels:
        doc.inject_script("reveal_hover", script_calling(REVEAL_JS, panels))
    return outcome


def _reveals(name: str, value: str) -> bool:
    value = value.strip().lower()
    if name == "opacity":
        return (number(value) or 0) >= 0.5
    if name in ("max-height", "height"):
        return value not in ("0", "0px")
    if name == "visibility":
        return value == "visible"
    # display and pointer-events show unless none; transform / clip: the hover state is the shown state
    return name not in ("display", "pointer-events") or value != "none"


def _split_at_hover(selector: str) -> tuple[str, str] | None:
    """`nav .menu:hover > .drop` -> (`nav .menu`, ` > .drop`); None when the hover is on the last
    compound (self-styling) or inside :not()/:is()."""
    if selector.count(":hover") != 1 or re.search(r"\([^)]*:hover", selector):
        return None
    index = selector.index(":hover")
    head, tail = selector[:index], selector[index + len(":hover"):]
    # The rest of the hovered compound (`:hover.open`) stays with the host.
    compound_rest = re.match(r"[^\s>+~]*", tail).group(0)
    rest = tail[len(compound_rest):]
    if not rest.strip():
        return None
    return (head + compound_rest).strip(), rest.rstrip()


def _last_compound(selector: str) -> str:
    compounds = [c for c in _COMBINATOR.split(selector.strip()) if c]
    return re.sub(r":[\w-]+(\([^)]*\))?", "", compounds[-1]) if compounds else ""


def _positioned_compounds(css: str, rules) -> set[str]:
    found = set()
    for rule in rules:
        for name, value, _ in parse_declarations(css[rule.body_start:rule.body_end]):
            if name == "position" and value.strip() in ("absolute", "fixed"):
                found |= {_last_compound(s) for s in split_selectors(rule.prelude)}
    return found
