"""The parsed app the offline transforms work on: BeautifulSoup plus what they inject.

Everything we add carries a `data-aui` marker naming the transform that added it, so a later
revision can tell the app's own style sheets from ours and never injects the same block twice.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from bs4 import BeautifulSoup, Tag
from bs4.element import Script, Stylesheet

from ._css import custom_properties

MARKER = "data-aui"


def script_calling(function: str, *args: Any) -> str:
    """The text of a `<script>` that calls the JS function expression `function` once, at load, with `args` as JSON."""
    arguments = ", ".join(json.dumps(value) for value in args)
    return f"({function.rstrip()})({arguments});\n"


@dataclass
class TransformOutcome:
    """What one transform did to the document."""

    changes: int = 0
    details: list[str] = field(default_factory=list)

    def note(self, detail: str, count: int = 1) -> None:
        self.changes += count
        if len(self.details) < 20:
            self.details.append(detail)


class AppDocument:
    """One app's HTML, parsed with the stdlib-backed parser (no lxml needed)."""

    def __init__(self, html: str) -> None:
        self.soup = BeautifulSoup(html, "html.parser")
        if self.soup.find("html") is None:
            raise ValueError("not an HTML document: no <html> element")

    def __str__(self) -> str:
        return str(self.soup)

    def _part(self, name: str) -> Tag:
        """<head> or <body>, made if missing (a head first in <html>, a body last)."""
        part = self.soup.find(name)
        if part is None:
            part, html = self.soup.new_tag(name), self.soup.find("html")
            html.insert(0 if name == "head" else len(html.contents), part)
        return part

    def app_styles(self) -> list[Tag]:
        """The app's own <style> elements (not ones a transform injected)."""
        return [tag for tag in self.soup.find_all("style") if not tag.has_attr(MARKER)]

    def app_css(self) -> str:
        return "\n".join(tag.get_text() for tag in self.app_styles())

    def set_css(self, tag: Tag, css: str) -> None:
        tag.clear()
        tag.append(Stylesheet(css))

    def variables(self) -> dict[str, str]:
        return custom_properties(self.app_css())

    def inject(self, name: str, style: str | None = None, script: str | None = None) -> bool:
        """Add (or refresh) our style sheet `name` at the end of <head>, after the app's rules so it wins ties, and our
        script `name` at the end of <body>, after the app's own scripts ran. Returns True when the document changed."""
        changed = False
        for kind, text, where in (("style", style, "head"), ("script", script, "body")):
            if text is None:
                continue
            tag = self.soup.find(kind, attrs={MARKER: name})
            if tag is None:
                tag = self.soup.new_tag(kind, attrs={MARKER: name})
                self._part(where).append(tag)
            elif tag.get_text() == text:
                continue
            tag.clear()
            tag.append(Stylesheet(text) if kind == "style" else Script(text))
            changed = True
        return changed

    def ensure_charset(self) -> None:
        """Declare UTF-8 if the file does not: the serialiser writes characters such as a
        non-breaking space as UTF-8 text, which a browser opening the file from disk would
        otherwise read as windows-1252."""
        for meta in self.soup.find_all("meta"):
            if meta.get("charset") or "charset" in str(meta.get("content", "")).lower():
                return
        self._part("head").insert(0, self.soup.new_tag("meta", attrs={"charset": "utf-8"}))
