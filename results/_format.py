"""How a rate is printed in every table, report and page: a percentage with one decimal, `–` for no figure."""

from __future__ import annotations


def pct(value: float | None) -> str:
    """`0.625` → `62.5`; None (nothing to measure) → `–`, never 0."""
    return "–" if value is None else f"{100 * value:.1f}"


def p_value(value: float | None) -> str:
    """A test's p-value as every table prints it: three significant figures (`0.0156`, `1`); `–` for none."""
    return "–" if value is None else f"{value:.3g}"
