"""The appearance variations: CSS served with the page (no script), so they hold from the first paint.

Each changes how the app looks, never what it says: no `content:`, no `text-transform`, nothing
hidden — the page's visible text stays the same (a test holds every bundled app to that), and the
app's ids, classes and logic are untouched.
"""

from __future__ import annotations

# Media keep their own colours under the inverted page (inverted twice).
_MEDIA = "img, video, picture, canvas, svg image, iframe, embed, object"

DARK = (
    "html { filter: invert(1) hue-rotate(180deg) !important; background: #fff !important; }\n"
    f"{_MEDIA} {{ filter: invert(1) hue-rotate(180deg) !important; }}\n"
)
"""A dark theme for any app: the page's lightness inverted with its hues kept (the way browsers'
forced dark modes do it), pictures and canvases left as they were."""

BLACK_WHITE = "html { filter: grayscale(1) contrast(1.75) !important; background: #fff !important; }\n"
"""No colour, high contrast: state shown only by colour (a red border, a green badge) is lost."""

HARD_FONT_FAMILY = "Dancing Script"
"""A lively script face (Debian's fonts-dancingscript, installed by scripts/install_chromium.sh)."""

HARD_FONT = (
    f"*, *::before, *::after {{ font-family: '{HARD_FONT_FAMILY}', cursive !important; "
    "letter-spacing: -0.03em !important; word-spacing: -0.1em !important; }\n"
)
"""A decorative script font with tighter spacing on every element (icon glyphs included)."""


def zoom(factor: float) -> str:
    """The page drawn at `factor` of its size (CSS zoom: layout reflows, as with a browser's zoom)."""
    return f"html {{ zoom: {factor:g} !important; }}\n"
