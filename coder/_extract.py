"""Getting one complete HTML document out of a model reply.

Models wrap the file in code fences (with or without a language), talk before and after it,
sometimes send several blocks (a CSS snippet, then the file), and get cut off by the token
limit. We take the block that holds `<html`, and refuse anything that does not reach `</html>`:
a half file would load as a broken app and waste every later stage.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from ._models import HtmlExtractionError

# An opening fence at the start of a line: ``` or ~~~ (3+), optional info string.
_FENCE_OPEN = re.compile(r"^(?P<fence>`{3,}|~{3,})[ \t]*(?P<info>[^\n`]*)\n", re.MULTILINE)
_HTML_START = re.compile(r"<!doctype\s+html|<html[\s>]", re.IGNORECASE)
_HTML_END = re.compile(r"</html\s*>", re.IGNORECASE)


def extract_html(text: str, *, finish_reason: str | None = None, model: str | None = None) -> str:
    """The complete HTML document in `text`, from `<!DOCTYPE`/`<html` to `</html>`.

    Raises:
        HtmlExtractionError: `truncated=True` when the reply was cut off (finish_reason
            "length", or `<html` without `</html>`); `truncated=False` when it holds no HTML
            document at all. The message names the model.
    """
    who = f"model {model!r}" if model else "the model"
    candidates = _candidates(text or "")
    with_html = [c for c in candidates if _HTML_START.search(c.body)]
    if not with_html:
        excerpt = _excerpt(text)
        raise HtmlExtractionError(
            f"{who} replied without an HTML document (no <!DOCTYPE html> or <html>); reply starts: {excerpt!r}",
            model=model,
            truncated=finish_reason == "length",
            excerpt=excerpt,
        )
    complete = [c for c in with_html if _HTML_END.search(c.body) and not c.unclosed_fence]
    if finish_reason == "length" or not complete:
        reason = "finish_reason=length" if finish_reason == "length" else "no </html> after <html>"
        raise HtmlExtractionError(
            f"{who} reply was cut off before the end of the HTML file ({reason}, {len(text)} chars)",
            model=model,
            truncated=True,
            excerpt=_excerpt(with_html[-1].body[-200:]),
        )
    # Several complete documents: the longest is the file; the others are usually excerpts.
    best = max(complete, key=lambda c: len(c.body))
    return _trim(best.body)


class _Candidate(NamedTuple):
    body: str
    unclosed_fence: bool = False


def _candidates(text: str) -> list[_Candidate]:
    """Fenced blocks if there are any, else the whole reply."""
    blocks: list[_Candidate] = []
    position = 0
    while True:
        opening = _FENCE_OPEN.search(text, position)
        if opening is None:
            break
        fence = opening.group("fence")
        # The closing fence: same character, at least as long, alone on its line.
        closing = re.compile(rf"^[ \t]*{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$", re.MULTILINE)
        end = closing.search(text, opening.end())
        if end is None:
            blocks.append(_Candidate(text[opening.end():], unclosed_fence=not _HTML_END.search(text[opening.end():])))
            break
        blocks.append(_Candidate(text[opening.end():end.start()]))
        position = end.end()
    if not blocks:
        return [_Candidate(text)]
    # Fences inside the document (a README in a <pre>) can split it; fall back to the whole reply.
    if not any(_HTML_START.search(b.body) and _HTML_END.search(b.body) for b in blocks):
        if _HTML_START.search(text) and _HTML_END.search(text):
            blocks.append(_Candidate(text))
    return blocks


def _trim(body: str) -> str:
    start = _HTML_START.search(body)
    ends = list(_HTML_END.finditer(body))
    assert start is not None and ends
    return body[start.start(): ends[-1].end()].strip() + "\n"


def _excerpt(text: str, limit: int = 160) -> str:
    flat = " ".join((text or "").split())
    return flat[:limit] + ("…" if len(flat) > limit else "")
