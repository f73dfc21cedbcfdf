"""The report's "GUI defects" section, and the whole `report.html` of a defect run (issue 18).

The section shows, for every detector scored on the run (`defect-metrics-<detector>.json`),
GTArena's figures — Accuracy, Recall-D, Recall-N overall, per kind and per type — and the
confusion matrix over types; with the run's defect set (`defects.json`), how many defects of each
type were proven of those attempted, and why the others were dropped. A loop run's `report.html`
gets the section too when its folder holds such files; a run with none gets nothing.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from commenter.detector import REFERENCE_NOTE, DetectorMetrics, percent
from cua import DEFECT_TYPES, write_atomic
from perturb import DefectSet

from ._format import esc

METRICS_GLOB = "defect-metrics-*.json"
_STYLE = ("body{font-family:sans-serif;margin:24px;max-width:1400px}table{border-collapse:collapse;margin:8px 0}"
          "td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}th{background:#f4f4f4}"
          "td:first-child,th:first-child{text-align:left}.zero{color:#bbb}.diag{background:#e6f4ea}.note{color:#555}")


def read_defect_metrics(run_dir: Path) -> list:
    """Every detector's metrics in the run folder, by detector name (unreadable files are skipped)."""
    found = []
    for path in sorted(Path(run_dir).glob(METRICS_GLOB)):
        try:
            found.append(DetectorMetrics.model_validate_json(path.read_bytes()))
        except ValueError:
            continue
    return found


def _rates_row(label: str, rates) -> str:
    return (f"<tr><td>{esc(label)}</td><td>{rates.tuples}</td><td>{rates.defective}</td><td>{rates.normal}</td>"
            f"<td>{percent(rates.accuracy)}</td><td>{percent(rates.recall_d)}</td><td>{percent(rates.recall_n)}</td>"
            f"<td>{percent(rates.type_accuracy)}</td><td>{rates.errors}</td></tr>")


def detector_html(metrics) -> str:
    """One detector's tables: overall, per kind, per type, and the confusion matrix."""
    head = ("<tr><th></th><th>tuples</th><th>defective</th><th>normal</th><th>Accuracy %</th><th>Recall-D %</th>"
            "<th>Recall-N %</th><th>type right %</th><th>errors</th></tr>")
    rows = _rates_row("all", metrics.overall)
    rows += "".join(_rates_row(f"{kind} (+ normal)", rates) for kind, rates in metrics.by_kind.items())
    rows += "".join(_rates_row(name, rates) for name, rates in metrics.by_type.items())
    columns = metrics.columns
    matrix = "<tr><th>truth \\ said</th>" + "".join(f"<th>{esc(c)}</th>" for c in columns) + "</tr>"
    for row in metrics.rows:
        cells = []
        for column in columns:
            count = metrics.confusion.get(row, {}).get(column, 0)
            css = "diag" if column == row and count else ("zero" if not count else "")
            cells.append(f'<td class="{css}">{count}</td>')
        matrix += f"<tr><td>{esc(row)}</td>{''.join(cells)}</tr>"
    unknown = f" {metrics.unknown} tuple(s) with unknown ground truth left out." if metrics.unknown else ""
    reference = f"<p class=note><b>{esc(REFERENCE_NOTE)}.</b></p>" if metrics.reference_assisted else ""
    return (f"<h3>Detector: {esc(metrics.label)}</h3>{reference}<table>{head}{rows}</table>"
            f"<p class=note>Accuracy: normal called normal, or defective called defective with its type. Recall-D: "
            f"defective tuples called defective. Recall-N: normal tuples called normal. A kind's row holds its "
            f"defective tuples and every normal one.{esc(unknown)}</p>"
            f"<details><summary>Confusion matrix over types</summary><table>{matrix}</table></details>")


def defect_set_html(run_dir: Path) -> str:
    """Proven / attempted per type, and the dropped defects with their reasons (empty without a defect set)."""
    try:
        defect_set = DefectSet.read(run_dir)
    except (FileNotFoundError, ValueError):
        return ""
    attempted = Counter(r.type for r in defect_set.records)
    proven = Counter(r.type for r in defect_set.proven)
    rows = "".join(f"<tr><td>{esc(name)}</td><td>{DEFECT_TYPES[name]}</td><td>{proven[name]}</td><td>{attempted[name]}</td></tr>"
                   for name in DEFECT_TYPES if attempted[name])
    dropped = "".join(f"<li><b>{esc(r.id)}</b> ({esc(r.selector or '–')}): {esc(r.reason)}</li>"
                      for r in defect_set.records if not r.proven)
    total = f"{len(defect_set.proven)} / {len(defect_set.records)}"
    return (f"<h3>Defect set: {total} proven / attempted</h3><p class=note>Apps: {esc(', '.join(defect_set.apps))}; "
            f"{defect_set.per_app} per app and type from seed {defect_set.seed}.</p>"
            f"<table><tr><th>type</th><th>kind</th><th>proven</th><th>attempted</th></tr>{rows}</table>"
            + (f"<details><summary>Dropped, and why</summary><ul>{dropped}</ul></details>" if dropped else ""))


def defects_section_html(run_dir: Path) -> str:
    """The "GUI defects" section of a report, or "" when the folder holds no defect set nor metrics."""
    run_dir = Path(run_dir)
    body = defect_set_html(run_dir) + "".join(detector_html(m) for m in read_defect_metrics(run_dir))
    return f"<h2>GUI defects (GTArena's metrics)</h2>{body}" if body else ""


def write_defects_report(run_dir: Path | str) -> Path:
    """`report.html` of a defect run folder: the defect set and every detector scored on it."""
    run_dir = Path(run_dir)
    document = (f"<!doctype html><html><head><meta charset=utf-8><title>GUI defects — {esc(run_dir.name)}</title>"
                f"<style>{_STYLE}</style></head><body><h1>GUI defects: {esc(run_dir.name)}</h1>"
                f"{defects_section_html(run_dir) or '<p>No defect set or detector metrics in this folder.</p>'}"
                "</body></html>")
    return write_atomic(run_dir / "report.html", document.encode("utf-8"))
