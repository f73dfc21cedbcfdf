"""The documents' tables of figures are a printer's output, pasted, never typed (issue 38 §3).

Every table in README.md and docs/*.md (but docs/benchmarks.md, a log of the benchmarks' JSON lines) is read
cell by cell. Where a row carries what a figure is computed from, the figure is computed again and printed with
the project's own printer: a McNemar p from the row's gained and lost (`mcnemar_exact_p`, `p_value`), a net or
paired difference from gained, lost and the tasks (`pct`), an ablation's interval from its paired table (SR full,
tasks, gained, lost: `paired_difference_interval`, `interval_text`). Every other interval cell ("57.3 [47.6, 66.4]"
or "[8.8, 48.6]") must read back exactly as `pct` / `interval_text` print it. A typed p of 0.016 (the printer's
0.0156) or a typed minus sign (−2.3 for -2.3) fails, naming the document, the line and both texts.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from insights import principle_table
from results import (
    Ablation,
    Insights,
    PrincipleRow,
    ablations_markdown,
    interval_text,
    mcnemar_exact_p,
    p_value,
    paired_difference_interval,
    pct,
    rounded,
)

ROOT = Path(__file__).resolve().parent.parent
DOCUMENTS = [ROOT / "README.md", *sorted(path for path in (ROOT / "docs").glob("*.md") if path.name != "benchmarks.md")]
_INTERVAL = re.compile(r"^(?:(?P<figure>\S+) )?\[(?P<low>[^,\]]+), (?P<high>[^\]]+)\]$")


def table_rows(text: str) -> list[tuple[int, dict[str, str]]]:
    """Every row of every Markdown table of `text`: (its line number, header → cell)."""
    found, lines, i = [], text.splitlines(), 0
    while i < len(lines):
        if lines[i].startswith("|") and i + 1 < len(lines) and re.fullmatch(r"\|(\s*:?-+:?\s*\|)+", lines[i + 1].strip()):
            header, rows, j = _cells(lines[i]), [], i + 2
            while j < len(lines) and lines[j].startswith("|"):
                rows.append((j + 1, dict(zip(header, _cells(lines[j])))))
                j += 1
            found += rows
            i = j
        else:
            i += 1
    return found


def _cells(line: str) -> list[str]:
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def _int(cell: str | None) -> int | None:
    return int(cell) if cell is not None and cell.isdigit() else None


def _interval_back(cell: str) -> str | None:
    """The cell as the printers print the figure and interval it holds; None when it holds no interval."""
    match = _INTERVAL.match(cell)
    if not match:
        return None
    try:
        low, high = float(match["low"]) / 100, float(match["high"]) / 100
        figure = None if match["figure"] is None else float(match["figure"])
    except ValueError:
        return "(numbers as the printers print them)"
    text = interval_text([low, high])
    return text if figure is None else f"{pct(figure / 100)} {text}"


def _recomputed(row: dict[str, str]) -> dict[str, str]:
    """Column → the cell the printer makes of what the row's other cells say (only where they say enough)."""
    gained, lost = _int(row.get("gained")), _int(row.get("lost"))
    if gained is None or lost is None:
        return {}
    out = {"McNemar p": p_value(round(mcnemar_exact_p(gained, lost), 6))}
    touched, tasks = _int(row.get("tasks touched")), _int(row.get("tasks"))
    if touched:
        out["net (pts)"] = pct((gained - lost) / touched)
    if tasks and "SR full" in row:
        # An ablation: gained = passed only without it, lost = passed only with it; SR full gives the passes with it.
        out["difference (pts)"] = pct((gained - lost) / tasks)
        full = round(float(row["SR full"]) * tasks / 100)
        both, neither = full - lost, tasks - (full - lost) - gained - lost
        if both >= 0 and neither >= 0:
            out["SR ablated"] = pct((full - lost + gained) / tasks)
            out["95 % CI"] = interval_text(rounded(paired_difference_interval(both, gained, lost, neither)))
    return out


def typed_cells(name: str, text: str) -> list[str]:
    """`name:line: column 'cell' — the printer prints 'text'` for every cell no printer would have printed."""
    problems = []
    for number, row in table_rows(text):
        expected = _recomputed(row)
        for column, cell in row.items():
            printed = expected.get(column) or _interval_back(cell)
            if printed is not None and cell != printed:
                problems.append(f"{name}:{number}: {column} {cell!r} — the printer prints {printed!r}")
    return problems


@pytest.mark.parametrize("path", DOCUMENTS, ids=lambda path: path.name)
def test_every_figure_of_a_documents_table_is_as_its_printer_prints_it(path):
    assert typed_cells(path.name, path.read_text(encoding="utf-8")) == []


def test_the_readme_and_the_insights_page_each_hold_a_principle_table_and_an_ablation_table():
    for path in (ROOT / "README.md", ROOT / "docs" / "insights.md"):
        rows = [row for _, row in table_rows(path.read_text(encoding="utf-8"))]
        assert any("net (pts)" in row and "McNemar p" in row for row in rows), f"{path.name}: no principle table"
        assert any("SR ablated" in row and "McNemar p" in row for row in rows), f"{path.name}: no ablation table"


def test_the_printers_own_tables_pass():
    principles = [PrincipleRow(principle="predictable behaviour", applied=10, unverifiable=1, apps=10, revisions=10,
                               tasks=23, gained=7, lost=0, net=7 / 23, net_ci95=[0.0877, 0.4857], mcnemar_p=0.015625),
                  PrincipleRow(principle="state visibility", applied=35, apps=12, revisions=30, tasks=91, gained=15,
                               lost=2, net=13 / 91, net_ci95=[0.0562, 0.2271], mcnemar_p=round(mcnemar_exact_p(15, 2), 6))]
    found = Insights(runs=["r"], offline=True, pairs=206, left_out=0, flips_total=17, flips_attributed=17,
                     flips_attributed_ratio=1.0, principles=principles, flips=[], changes=[])
    ablation = Ablation(run="r", principle="input permissiveness", folder="f", offline=True, tasks=103, both=67,
                        full_only=4, ablated_only=3, neither=29, full_sr=71 / 103, ablated_sr=70 / 103, paired_diff=-1 / 103,
                        ci95=rounded(paired_difference_interval(67, 3, 4, 29)), mcnemar_p=1.0)
    text = principle_table(found) + "\n\n" + ablations_markdown([ablation])
    assert "| 0.0156 |" in text and typed_cells("printed", text) == []


def test_a_typed_row_is_caught():
    """The README's tables before this test: p typed to two figures (0.016 for the printer's 0.0156), a typed minus
    sign (−2.3), and a rate rounded by hand (67.9: 70 of 103 tasks is 68.0); the printed cells beside them pass."""
    typed = ("| principle | applied | apps | tasks touched | gained | lost | net (pts) | 95 % CI | McNemar p |\n"
             "|---|---:|---:|---:|---:|---:|---:|---|---:|\n"
             "| predictable behaviour | 10 | 10 | 23 | 7 | 0 | 30.4 | [8.8, 48.6] | 0.016 |\n"
             "| state visibility | 35 | 12 | 91 | 15 | 2 | 14.3 | [5.6, 22.7] | 0.00235 |\n"
             "\n"
             "| left out | revisions | tasks | SR full | SR ablated | difference (pts) | 95 % CI | McNemar p | gained | lost |\n"
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n"
             "| predictable behaviour | 12 | 103 | 68.9 | 68.9 | 0.0 | [−2.3, 2.3] | 1 | 0 | 0 |\n"
             "| input permissiveness | 12 | 103 | 68.9 | 67.9 | -1.0 | [-6.4, 4.5] | 1 | 3 | 4 |\n")
    assert typed_cells("README.md", typed) == [
        "README.md:3: McNemar p '0.016' — the printer prints '0.0156'",
        "README.md:8: 95 % CI '[−2.3, 2.3]' — the printer prints '[-2.3, 2.3]'",
        "README.md:9: SR ablated '67.9' — the printer prints '68.0'",
    ]
