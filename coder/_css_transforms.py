"""Offline rewrites of the app's style sheets, one function per agent-centric fix.

Each takes the parsed app and returns what it changed. They only touch presentation: no id,
class, element or script of the app is renamed or removed, so checkers and handlers keep
working (the offline coder checks the contract afterwards anyway).

`reveal_hover` reveals what only shows on hover (state visibility): rules like
`.row:hover .tools {opacity: 1}` hide controls from any agent that does not hover first. Two cases:

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
from collections.abc import Callable
from pathlib import Path

from cua import DEFAULT_VIEWPORT, Viewport

from ._css import (
    CssRule,
    Declaration,
    adjust_for_contrast,
    apply_edits,
    blend,
    contrast,
    first_colour,
    format_declarations,
    length_px,
    number,
    parse_colour,
    parse_declarations,
    parse_rules,
    split_selectors,
    to_hex,
    walk_style_rules,
)
from ._document import AppDocument, TransformOutcome, script_calling

WHITE = (255.0, 255.0, 255.0, 1.0)
MIN_CONTRAST = 4.5
# Below this against the page background, a text colour is almost surely drawn on some other
# background (white text on a dark button) that this rule does not name: leave it alone.
FOREIGN_BACKGROUND_CONTRAST = 1.3

NO_MOTION_CSS = """/* aui: no motion. Durations near zero rather than `none`, so transitionend and
   animationend still fire for apps that wait for them. */
*, *::before, *::after {
  animation-duration: 0.001ms !important; animation-delay: 0s !important;
  animation-iteration-count: 1 !important; transition-duration: 0.001ms !important;
  transition-delay: 0s !important; scroll-behavior: auto !important;
}
"""

LARGE_TARGETS_CSS = """/* aui: click targets of at least 44x44 px. */
button, [role=button], [role=switch], [role=tab], [role=menuitem], [role=checkbox], [role=option],
input[type=button], input[type=submit], input[type=reset], select, summary, [onclick] {
  min-width: 44px !important; min-height: 44px !important;
}
input:not([type]), input[type=text], input[type=number], input[type=search], input[type=email],
input[type=password], input[type=tel], input[type=url], input[type=date], input[type=time], textarea {
  min-height: 44px !important;
}
input[type=checkbox], input[type=radio] { min-width: 22px !important; min-height: 22px !important; }
input[type=range] { min-height: 28px !important; }
"""

_TARGET_TAGS = ["button", "select", "summary"]
_TARGET_ROLES = {"button", "switch", "tab", "menuitem", "checkbox", "option"}


def remove_animations(doc: AppDocument) -> TransformOutcome:
    """Neutralise CSS animations and transitions (predictable behaviour)."""
    outcome = TransformOutcome()
    css = doc.app_css()
    found = len(re.findall(r"(?<![\w-])(?:animation|transition)(?:-[a-z-]+)?\s*:", css))
    found += sum(1 for tag in doc.soup.find_all(style=True) if re.search(r"animation|transition", tag["style"]))
    if found and doc.inject("remove_animations", NO_MOTION_CSS):
        outcome.note(f"neutralised {found} animation/transition declarations", found)
    return outcome


def enlarge_targets(doc: AppDocument) -> TransformOutcome:
    """Give buttons, toggles, inputs and selects a 44x44 px minimum (interaction robustness)."""
    outcome = TransformOutcome()
    static = doc.soup.find_all(_TARGET_TAGS) + doc.soup.find_all("input") + [
        tag for tag in doc.soup.find_all(attrs={"role": True}) if tag["role"] in _TARGET_ROLES
    ] + doc.soup.find_all(onclick=True)
    static = [tag for tag in {id(t): t for t in static}.values() if tag.get("type") != "hidden"]
    # Controls the scripts create are covered too: the rules are selectors, not element edits.
    if doc.inject("enlarge_targets", LARGE_TARGETS_CSS):
        outcome.note(f"44 px minimum on {len(static)} controls in the markup and on any created later", max(1, len(static)))
    return outcome


def raise_contrast(doc: AppDocument) -> TransformOutcome:
    """Darken (or lighten) text colours below 4.5:1 against their background (state visibility)."""
    variables = doc.variables()
    page = _page_background(doc, variables)

    def new_value(rule: CssRule, declarations: list[Declaration], name: str, value: str) -> str | None:
        if name == "color":
            return _fixed_colour(value, _own_background(declarations, variables), page, variables)
        if name == "opacity" and _looks_interactive(rule.prelude, declarations):
            opacity = number(value)
            return "1" if opacity is not None and 0.3 <= opacity < 1 else None
        return None

    return _rewrite_values(doc, new_value)


_SPACING = {"margin", "margin-top", "margin-bottom", "padding", "padding-top", "padding-bottom", "gap", "row-gap"}


def fit_viewport(doc: AppDocument, viewport: Viewport = DEFAULT_VIEWPORT) -> TransformOutcome:
    """Compact vertical spacing and tall boxes so more controls fit in `viewport` (interaction robustness)."""
    tall = viewport.height * 4 / 9  # a box taller than 4/9 of the viewport (320 px of 720) is shortened

    def new_value(rule: CssRule, declarations: list[Declaration], name: str, value: str) -> str | None:
        if re.search(r"\b(canvas|svg|img|video|iframe)\b", rule.prelude):
            return None
        return _compact(name, value, tall)

    return _rewrite_values(doc, new_value)


def _rewrite_values(doc: AppDocument, new_value: Callable[[CssRule, list[Declaration], str, str], str | None]
                    ) -> TransformOutcome:
    """Give each declaration of the app's style rules `new_value(rule, declarations, name, value)` where that is
    not None, rewriting only the rules that change."""
    outcome = TransformOutcome()
    for tag in doc.app_styles():
        css = tag.get_text()
        edits = []
        for rule in walk_style_rules(parse_rules(css)):
            declarations = parse_declarations(css[rule.body_start:rule.body_end])
            result = []
            for name, value, important in declarations:
                new = new_value(rule, declarations, name, value)
                if new is not None and new != value:
                    outcome.note(f"{rule.prelude} {{{name}: {value} -> {new}}}")
                    value = new
                result.append((name, value, important))
            if result != declarations:
                edits.append((rule.body_start, rule.body_end, format_declarations(result)))
        if edits:
            doc.set_css(tag, apply_edits(css, edits))
    return outcome


def _compact(name: str, value: str, tall: float) -> str | None:
    tokens = value.split()
    if name in _SPACING:
        # Shorthands: only the vertical positions (1st, 3rd); a single value applies to all sides.
        vertical = {0, 2} if name in ("margin", "padding") and len(tokens) > 1 else set(range(len(tokens)))
        out = []
        for index, token in enumerate(tokens):
            px = length_px(token)
            out.append(f"{max(12, round(px * 0.4))}px" if index in vertical and px is not None and px > 24 else token)
        return " ".join(out)
    if name in ("height", "min-height") and len(tokens) == 1:
        px = length_px(tokens[0])
        if px is not None and px > tall:
            return f"{round(px * 0.6)}px"
        match = re.fullmatch(r"(\d+(?:\.\d+)?)vh", tokens[0])
        if name == "min-height" and match and float(match.group(1)) >= 50:
            return "auto"
    return None


def _page_background(doc: AppDocument, variables: dict[str, str]):
    css = doc.app_css()
    background = WHITE
    for rule in walk_style_rules(parse_rules(css)):
        if any(s in ("html", "body", ":root") for s in split_selectors(rule.prelude)):
            colour = _own_background(parse_declarations(css[rule.body_start:rule.body_end]), variables)
            if colour is not None:
                background = colour
    return background


def _own_background(declarations, variables):
    for name, value, _ in reversed(declarations):
        if name in ("background", "background-color"):
            colour = first_colour(value, variables)
            return colour if colour is not None and colour[3] >= 0.9 else None
    return None


def _fixed_colour(value: str, own, page, variables) -> str | None:
    colour = parse_colour(value, variables)
    if colour is None:
        return None
    background = own or page
    ratio = contrast(blend(colour, background), background)
    if ratio >= MIN_CONTRAST or (own is None and ratio < FOREIGN_BACKGROUND_CONTRAST):
        return None
    return to_hex(adjust_for_contrast(blend(colour, background), background))


def _looks_interactive(prelude: str, declarations) -> bool:
    if any(n == "cursor" and v.strip() == "pointer" for n, v, _ in declarations):
        return True
    return re.search(r"\b(button|btn|del|delete|remove|close|icon)\b", prelude) is not None


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
    style = "/* aui: shown without hovering */\n" + "\n".join(new_rules) + "\n" if new_rules else None
    doc.inject("reveal_hover", style, script_calling(REVEAL_JS, panels) if panels else None)
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
    return {_last_compound(s) for rule in rules
            for name, value, _ in parse_declarations(css[rule.body_start:rule.body_end])
            if name == "position" and value.strip() in ("absolute", "fixed") for s in split_selectors(rule.prelude)}
