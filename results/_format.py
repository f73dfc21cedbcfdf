"""How a rate is printed in every table, report and page: a percentage with one decimal, `–` for no figure; and
how a track is named and a value HTML-escaped there."""

from __future__ import annotations

import html
from collections.abc import Iterable


def pct(value: float | None) -> str:
    """`0.625` → `62.5`; None (nothing to measure) → `–`, never 0."""
    return "–" if value is None else f"{100 * value:.1f}"


def esc(text: object) -> str:
    """Any value as HTML text, for the report's sections."""
    return html.escape(str(text))


def track_text(track: Iterable[str | None]) -> str:
    """A track as every table names it: its parts that are set, joined (`offline · heuristic · cua · dashboard`)."""
    return " · ".join(part for part in track if part)


def p_value(value: float | None) -> str:
    """A test's p-value as every table prints it: three significant figures (`0.0156`, `1`); `–` for none."""
    return "–" if value is None else f"{value:.3g}"
