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
    """The text of a `<script>` that calls the JS function expression `function` once, at load.

    `args` are passed as JSON. The text is `(<function>)(<args>);` and a newline, with the
    function's trailing newline (a `.js` file's last) dropped.
    """
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

    @property
    def head(self) -> Tag:
        head = self.soup.find("head")
        if head is None:
            head = self.soup.new_tag("head")
            self.soup.find("html").insert(0, head)
        return head

    @property
    def body(self) -> Tag:
        body = self.soup.find("body")
        if body is None:
            body = self.soup.new_tag("body")
            self.soup.find("html").append(body)
        return body

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

    def injected(self, name: str, kind: str = "style") -> Tag | None:
        """Our injected `<style>` or `<script>` (`kind`) called `name`, if present."""
        return self.soup.find(kind, attrs={MARKER: name})

    def inject_style(self, name: str, css: str) -> bool:
        """Add (or refresh) our style sheet `name` at the end of <head>, after the app's rules so it wins
        ties. Returns True when the document changed."""
        return self._inject("style", name, Stylesheet(css), "head")

    def inject_script(self, name: str, code: str) -> bool:
        """Add (or refresh) our script `name` at the end of <body>, after the app's own scripts ran."""
        return self._inject("script", name, Script(code), "body")

    def _inject(self, kind: str, name: str, text: Stylesheet | Script, where: str) -> bool:
        tag = self.injected(name, kind)
        if tag is None:
            tag = self.soup.new_tag(kind, attrs={MARKER: name})
            getattr(self, where).append(tag)  # <head> or <body>, made if missing
        elif tag.get_text() == text:
            return False
        tag.clear()
        tag.append(text)
        return True

    def ensure_charset(self) -> None:
        """Declare UTF-8 if the file does not: the serialiser writes characters such as a
        non-breaking space as UTF-8 text, which a browser opening the file from disk would
        otherwise read as windows-1252."""
        for meta in self.soup.find_all("meta"):
            if meta.get("charset") or "charset" in str(meta.get("content", "")).lower():
                return
        self.head.insert(0, self.soup.new_tag("meta", attrs={"charset": "utf-8"}))
