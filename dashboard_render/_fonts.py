"""Fonts for the dashboard: a fixed fallback chain of system font files, and text helpers.

Determinism is the point here. Fonts come from a fixed list of file paths (never from
fontconfig, whose answer depends on what else is installed), glyphs are laid out with
Pillow's BASIC engine (Raqm's output can change with the library version), and a character
the first font lacks is drawn with the first font in the chain that has it. The same font
files give the same PNG bytes.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from itertools import groupby
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

_DEJAVU = Path("/usr/share/fonts/truetype/dejavu")
_LIBERATION = Path("/usr/share/fonts/truetype/liberation")
_NOTO = Path("/usr/share/fonts/opentype/noto")

# Per style: the preferred file first, then fallbacks for glyphs it lacks (CJK needs Noto).
FONT_CHAINS: dict[str, tuple[Path, ...]] = {
    "sans": (_DEJAVU / "DejaVuSans.ttf", _LIBERATION / "LiberationSans-Regular.ttf", _NOTO / "NotoSansCJK-Regular.ttc"),
    "bold": (_DEJAVU / "DejaVuSans-Bold.ttf", _LIBERATION / "LiberationSans-Bold.ttf", _NOTO / "NotoSansCJK-Bold.ttc"),
    "condensed": (
        _DEJAVU / "DejaVuSansCondensed.ttf",
        _DEJAVU / "DejaVuSans.ttf",
        _LIBERATION / "LiberationSansNarrow-Regular.ttf",
        _NOTO / "NotoSansCJK-Regular.ttc",
    ),
    "condensed-bold": (
        _DEJAVU / "DejaVuSansCondensed-Bold.ttf",
        _DEJAVU / "DejaVuSans-Bold.ttf",
        _LIBERATION / "LiberationSansNarrow-Bold.ttf",
        _NOTO / "NotoSansCJK-Bold.ttc",
    ),
    "mono": (_DEJAVU / "DejaVuSansMono.ttf", _LIBERATION / "LiberationMono-Regular.ttf", _NOTO / "NotoSansCJK-Regular.ttc"),
}

_PROBE_MISSING = "\U000f0000"  # a private-use code point no UI font covers: renders as .notdef
ELLIPSIS = "…"


@dataclass(frozen=True)
class Font:
    """One style at one size: the chain of loaded faces (at least one)."""

    faces: tuple[ImageFont.FreeTypeFont | ImageFont.ImageFont, ...]
    size: int

    @property
    def line_height(self) -> int:
        return int(round(self.size * 1.25))

    def runs(self, text: str) -> list[tuple[object, str]]:
        """Split `text` into (face, substring) runs, each drawn by the first face that has its glyphs."""
        if text.isascii() or len(self.faces) == 1:
            return [(self.faces[0], text)] if text else []
        by_face = groupby(text, lambda char: self.faces[_face_index(self, char)])
        return [(face, "".join(chars)) for face, chars in by_face]

    def width(self, text: str) -> float:
        return sum(face.getlength(part) for face, part in self.runs(text))

    def draw(self, draw: ImageDraw.ImageDraw, xy: tuple[float, float], text: str, fill) -> float:
        """Draw `text` with its top-left at `xy`; returns the x after the text."""
        x, y = xy
        for face, part in self.runs(text):
            draw.text((x, y), part, font=face, fill=fill)
            x += face.getlength(part)
        return x


@lru_cache(maxsize=None)
def font(style: str, size: int) -> Font:
    """The font for `style` ("sans", "bold", "condensed", "condensed-bold", "mono") at `size` px.

    Raises KeyError for an unknown style. Falls back to Pillow's bundled font when none of the
    chain's files exist, so rendering never fails for want of fonts (it just looks plainer).
    """
    faces = [
        ImageFont.truetype(str(path), size, layout_engine=ImageFont.Layout.BASIC)
        for path in FONT_CHAINS[style]
        if path.is_file()
    ]
    return Font(faces=tuple(faces or [ImageFont.load_default(size)]), size=size)


@lru_cache(maxsize=4096)
def _mask_bytes(face, char: str) -> tuple[bytes, tuple[int, int]]:
    mask = face.getmask(char)
    return bytes(Image.Image()._new(mask).tobytes()), mask.size


def _face_index(chain: Font, char: str) -> int:
    if ord(char) < 0x250 or char.isspace():
        return 0
    return next((index for index, face in enumerate(chain.faces)
                 if _mask_bytes(face, char) != _mask_bytes(face, _PROBE_MISSING)), 0)


def fit_line(chain: Font, text: str, max_width: float) -> str:
    """`text` cut to fit `max_width`, ending in an ellipsis when it was cut."""
    if chain.width(text) <= max_width:
        return text
    low, high = 0, len(text)
    while low < high:  # the longest prefix that fits with the ellipsis
        middle = (low + high + 1) // 2
        if chain.width(text[:middle].rstrip() + ELLIPSIS) <= max_width:
            low = middle
        else:
            high = middle - 1
    return text[:low].rstrip() + ELLIPSIS if low else ""


def wrap(chain: Font, text: str, max_width: float, max_lines: int) -> list[str]:
    """Word-wrap `text` into at most `max_lines` lines of at most `max_width` px.

    Words longer than a line are broken by characters; text that does not fit in `max_lines`
    ends with an ellipsis. Newlines in `text` are treated as spaces (captions are one paragraph).
    """
    if max_lines <= 0:
        return []
    words = " ".join(text.split()).split(" ") if text.strip() else []
    lines: list[str] = []
    current = ""
    index = 0
    while index < len(words):
        word = words[index]
        candidate = f"{current} {word}" if current else word
        if chain.width(candidate) <= max_width:
            current = candidate
            index += 1
            continue
        if not current:  # a single word wider than the line: break it
            cut = len(word)
            while cut > 1 and chain.width(word[:cut]) > max_width:
                cut -= 1
            current, words[index] = word[:cut], word[cut:]
        lines.append(current)
        current = ""
        if len(lines) == max_lines:
            break
    if current and len(lines) < max_lines:
        lines.append(current)
        index = len(words)
    if index < len(words) and lines:
        rest = " ".join([lines[-1]] + words[index:])
        lines[-1] = fit_line(chain, rest, max_width)
    return lines
