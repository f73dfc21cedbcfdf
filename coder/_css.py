"""Just enough CSS to rewrite an app's style sheets: rules, declarations, colours, lengths.

Not a full CSS parser: it finds rule blocks (descending into @media/@supports), splits
declarations, and reads the colour and length forms generated apps actually use. Anything it
does not understand is left exactly as it was.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from source_scan import closing, mask, scan

_GROUPING_AT_RULES = ("@media", "@supports", "@layer", "@container", "@document")
_RULE_MARK = re.compile(r"[;{}]")


@dataclass
class CssRule:
    prelude: str
    """The selector list, or the at-rule prelude (`@media (max-width: 600px)`)."""
    body_start: int
    body_end: int
    """Span of the text between the braces, in the style sheet's coordinates."""
    children: list["CssRule"] = field(default_factory=list)


def parse_rules(css: str, offset: int = 0) -> list[CssRule]:
    """Rules of `css` in order; grouping at-rules carry their inner rules as `children`."""
    rules: list[CssRule] = []
    masked, i, prelude_start = mask(css, "css"), 0, 0
    while (mark := _RULE_MARK.search(masked, i)) is not None:
        i = mark.start()
        if masked[i] != "{":
            i = prelude_start = i + 1  # after a rule, or an @import/@charset statement
            continue
        close = closing(masked, i)
        close = len(css) if close < 0 else close
        prelude = _strip_comments(css[prelude_start:i]).strip()
        rule = CssRule(prelude, offset + i + 1, offset + close)
        if prelude.lower().startswith(_GROUPING_AT_RULES):
            rule.children = parse_rules(css[i + 1:close], offset + i + 1)
        rules.append(rule)
        i = prelude_start = close + 1
    return rules


def walk_style_rules(rules: list[CssRule]) -> list[CssRule]:
    """Every plain style rule (selectors, not at-rules), depth first, including those in @media."""
    found: list[CssRule] = []
    for rule in rules:
        if rule.children:
            found += walk_style_rules(rule.children)
        elif not rule.prelude.startswith("@"):
            found.append(rule)
    return found


def apply_edits(css: str, edits: list[tuple[int, int, str]]) -> str:
    """Replace spans (start, end, text), which must not overlap."""
    for start, end, text in sorted(edits, reverse=True):
        css = css[:start] + text + css[end:]
    return css


Declaration = tuple[str, str, bool]
"""(property in lower case, value without !important, important)."""


def parse_declarations(body: str) -> list[Declaration]:
    declarations = []
    for part in _split_top_level(_strip_comments(body), ";"):
        name, colon, value = part.partition(":")
        if not colon or not name.strip():
            continue
        value = value.strip()
        important = bool(re.search(r"!\s*important\s*$", value, re.IGNORECASE))
        value = re.sub(r"\s*!\s*important\s*$", "", value, flags=re.IGNORECASE)
        declarations.append((name.strip().lower(), value, important))
    return declarations


def format_declarations(declarations: list[Declaration]) -> str:
    return " " + "; ".join(f"{n}: {v}{' !important' if imp else ''}" for n, v, imp in declarations) + "; "


def custom_properties(css: str) -> dict[str, str]:
    """`--name: value` declarations anywhere (later ones win), for resolving var()."""
    return {name: value for rule in walk_style_rules(parse_rules(css))
            for name, value, _ in parse_declarations(css[rule.body_start:rule.body_end]) if name.startswith("--")}


RGBA = tuple[float, float, float, float]

_NAMED = {
    "white": "#ffffff", "black": "#000000", "gray": "#808080", "grey": "#808080", "silver": "#c0c0c0",
    "lightgray": "#d3d3d3", "lightgrey": "#d3d3d3", "darkgray": "#a9a9a9", "darkgrey": "#a9a9a9",
    "gainsboro": "#dcdcdc", "whitesmoke": "#f5f5f5", "red": "#ff0000", "green": "#008000", "blue": "#0000ff",
    "navy": "#000080", "teal": "#008080", "orange": "#ffa500", "yellow": "#ffff00", "purple": "#800080",
    "transparent": "rgba(0,0,0,0)",
}
_VAR = re.compile(r"var\(\s*(--[\w-]+)\s*(?:,\s*([^()]*))?\)")
_COLOUR_TOKEN = re.compile(r"#[0-9a-fA-F]{3,8}\b|rgba?\([^)]*\)|var\(--[\w-]+(?:\s*,[^()]*)?\)|\b[a-z]+\b")


def resolve_vars(value: str, variables: dict[str, str], depth: int = 0) -> str:
    if depth > 5 or "var(" not in value:
        return value

    substituted = _VAR.sub(lambda match: variables.get(match.group(1), match.group(2) or ""), value)
    return resolve_vars(substituted, variables, depth + 1)


def parse_colour(value: str, variables: dict[str, str] | None = None) -> RGBA | None:
    """An RGBA colour (channels 0–255, alpha 0–1) from one CSS colour value, or None."""
    text = resolve_vars(value.strip(), variables or {}).strip().lower()
    text = _NAMED.get(text, text)
    if re.fullmatch(r"#[0-9a-f]{3,8}", text) and len(text) in (4, 5, 7, 9):
        digits = text[1:]
        if len(digits) in (3, 4):
            digits = "".join(c * 2 for c in digits)
        channels = [int(digits[k:k + 2], 16) for k in range(0, len(digits), 2)]
        alpha = channels[3] / 255 if len(channels) == 4 else 1.0
        return (channels[0], channels[1], channels[2], alpha)
    match = re.fullmatch(r"rgba?\(([^)]*)\)", text)
    if match:
        parts = [p for p in re.split(r"[\s,/]+", match.group(1).strip()) if p]
        if len(parts) not in (3, 4):
            return None
        try:
            rgb = [float(p[:-1]) * 2.55 if p.endswith("%") else float(p) for p in parts[:3]]
            alpha = 1.0 if len(parts) == 3 else (float(parts[3][:-1]) / 100 if parts[3].endswith("%") else float(parts[3]))
        except ValueError:
            return None
        return (rgb[0], rgb[1], rgb[2], alpha)
    return None


def first_colour(value: str, variables: dict[str, str]) -> RGBA | None:
    """The colour in a `background` shorthand, or None when it is an image or gradient."""
    resolved = resolve_vars(value, variables)
    if "gradient(" in resolved or "url(" in resolved:
        return None
    colours = (parse_colour(token, variables) for token in _COLOUR_TOKEN.findall(resolved))
    return next((colour for colour in colours if colour is not None), None)


def luminance(colour: RGBA) -> float:
    def channel(value: float) -> float:
        c = max(0.0, min(255.0, value)) / 255
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    return 0.2126 * channel(colour[0]) + 0.7152 * channel(colour[1]) + 0.0722 * channel(colour[2])


def contrast(a: RGBA, b: RGBA) -> float:
    la, lb = sorted((luminance(a), luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def blend(colour: RGBA, background: RGBA) -> RGBA:
    """`colour` composited over an opaque `background`."""
    alpha = colour[3]
    return tuple(colour[k] * alpha + background[k] * (1 - alpha) for k in range(3)) + (1.0,)  # type: ignore[return-value]


def to_hex(colour: RGBA) -> str:
    return "#" + "".join(f"{int(round(max(0, min(255, c)))):02x}" for c in colour[:3])


def adjust_for_contrast(colour: RGBA, background: RGBA, target: float = 4.5) -> RGBA:
    """`colour` moved towards black (light backgrounds) or white (dark ones) until it reaches `target`."""
    goal = (0.0, 0.0, 0.0) if luminance(background) > 0.18 else (255.0, 255.0, 255.0)
    current = colour
    for step in range(1, 21):
        mix = step / 20
        current = tuple(colour[k] * (1 - mix) + goal[k] * mix for k in range(3)) + (1.0,)  # type: ignore[assignment]
        if contrast(current, background) >= target:
            break
    return current


def number(value: str) -> float | None:
    """A plain number (`0.5`), or None for anything else."""
    try:
        return float(value.strip())
    except ValueError:
        return None


def length_px(token: str) -> float | None:
    """Pixels of a length token (`px`, `rem`/`em` at 16 px), or None for anything else."""
    match = re.fullmatch(r"(-?\d*\.?\d+)(px|rem|em)", token.strip().lower())
    if not match:
        return None
    number = float(match.group(1))
    return number if match.group(2) == "px" else number * 16


def split_selectors(prelude: str) -> list[str]:
    """The selectors of a selector list (`a, b:hover > c`)."""
    return [part.strip() for part in _split_top_level(prelude, ",")]


def _split_top_level(text: str, separator: str) -> list[str]:
    """`text` split at `separator` outside strings and parentheses (its comments are stripped already)."""
    parts, start = [], 0
    for k, token, depth in scan(mask(text, "css", comments=False), re.escape(separator), brackets="(", clamp=True):
        if depth == 0 and token == separator:
            parts.append(text[start:k])
            start = k + 1
    parts.append(text[start:])
    return [p for p in parts if p.strip()]


def _strip_comments(text: str) -> str:
    return re.sub(r"/\*.*?\*/", " ", text, flags=re.DOTALL)
