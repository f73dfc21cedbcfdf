"""The report's "Agreement between judges" section and `agreement.json` (issue 14; the paper's Table 6 shape).

Written whenever the run folder holds judgements (`judgements.jsonl`) or people's labels
(`labels.jsonl`); a run with neither gets no section and no agreement.json.
"""

from __future__ import annotations

from pathlib import Path

from cua import write_atomic
from verifier.judge import AGREEMENT_FILE, AgreementReport, PairAgreement, agreement_report

from ._format import esc, pct


def write_agreement(run_dir: Path) -> AgreementReport | None:
    """Compare the run's judges and write `agreement.json`; None (and no file written) when there is nothing to compare.

    An agreement.json left from earlier judgements or labels that are gone is removed, so the file
    always describes the folder as it is.
    """
    report = agreement_report(run_dir)
    path = run_dir / AGREEMENT_FILE
    if report.empty:
        path.unlink(missing_ok=True)
        return None
    write_atomic(path, report.model_dump_json(indent=1).encode("utf-8"))
    return report


def read_agreement(run_dir: Path) -> AgreementReport | None:
    """The run's `agreement.json` as written by `write_agreement`, or None when there is none."""
    path = run_dir / AGREEMENT_FILE
    return AgreementReport.model_validate_json(path.read_bytes()) if path.is_file() else None


def _kappa(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}"


def agreement_records(report: AgreementReport) -> list[dict[str, str]]:
    """Every pair of judges as `aui report` prints it (and `records_markdown` writes it): n, left out (unsure / one
    judge only), agreement, κ, balanced accuracy, the confusion counts (S→F: reference success, other failure), notes."""
    records = []
    for pair in report.pairs:
        counts = pair.confusion
        records.append({
            "reference": pair.reference, "other": pair.other, "n": str(pair.n),
            "left out": f"{pair.left_out_unsure} / {pair.left_out_missing}", "agreement %": pct(pair.agreement),
            "κ": _kappa(pair.kappa), "bal. acc. %": pct(pair.balanced_accuracy), "S→S": str(counts.success_success),
            "S→F": str(counts.success_failure), "F→S": str(counts.failure_success), "F→F": str(counts.failure_failure),
            "notes": "; ".join(note for note in (pair.reason, pair.kappa_note, pair.balanced_accuracy_note) if note)})
    return records


_SHOWN = ("reference", "other", "n", "left out", "agreement %", "κ", "bal. acc. %")
"""The columns of `agreement_records` the report shows as they are (it draws the confusion counts as a table)."""


def _confusion_html(pair: PairAgreement) -> str:
    """2×2 counts: rows the reference's decision, columns the other judge's (S success, F failure)."""
    counts = pair.confusion
    return ('<table class="confusion"><tr><th></th><th>S</th><th>F</th></tr>'
            f"<tr><th>S</th><td>{counts.success_success}</td><td>{counts.success_failure}</td></tr>"
            f"<tr><th>F</th><td>{counts.failure_success}</td><td>{counts.failure_failure}</td></tr></table>")


def _trajectory_link(trajectory: str, dashboards: dict[str, str]) -> str:
    dashboard = dashboards.get(trajectory)
    if not dashboard:
        return f"<code>{esc(trajectory)}</code> (no dashboard)"
    return f'<a href="{esc(dashboard)}"><code>{esc(trajectory)}</code></a>'


def _disagreements_html(pair: PairAgreement, dashboards: dict[str, str]) -> str:
    if not pair.disagreements:
        return ""
    groups = ((f"{pair.reference}: success, {pair.other}: failure", pair.reference_success_other_failure),
              (f"{pair.reference}: failure, {pair.other}: success", pair.reference_failure_other_success))
    items = "".join(f"<h5>{esc(title)} ({len(ids)})</h5><ul>" + "".join(f"<li>{_trajectory_link(t, dashboards)}</li>" for t in ids)
                    + "</ul>" for title, ids in groups if ids)
    return (f'<details class="disagreements"><summary>{esc(pair.reference)} vs {esc(pair.other)}: '
            f"{len(pair.disagreements)} {'trajectory' if len(pair.disagreements) == 1 else 'trajectories'} decided differently"
            f"</summary>{items}</details>")


def agreement_section_html(report: AgreementReport | None) -> str:
    """The section's HTML (empty when there is no report): judges, the pair table, disagreements
    linked to their dashboards (paths relative to the run folder, where report.html sits)."""
    if report is None:
        return ""
    judges = "".join(f"<tr><td>{esc(j.name)}</td><td>{esc(j.kind)}</td><td>{j.decided}</td><td>{j.undecided}</td></tr>"
                     for j in report.judges)
    rows = [("<tr>" + "".join(f"<td>{esc(record[column])}</td>" for column in _SHOWN)
             + f"<td>{_confusion_html(pair)}</td><td>{len(pair.disagreements)}</td>"
             f"<td class=note>{esc(record['notes'])}</td></tr>")
            for pair, record in zip(report.pairs, agreement_records(report))]
    pairs = ('<table class="summary agreement"><thead><tr><th>reference</th><th>other</th><th>n</th>'
             "<th>left out (unsure / one judge only)</th><th>agreement (%)</th><th>Cohen's κ</th>"
             "<th>balanced accuracy (%)</th><th>confusion (rows: reference)</th><th>disagreements</th><th>notes</th></tr></thead>"
             f"<tbody>{''.join(rows)}</tbody></table>") if rows else "<p class=note>Only one judge so far: no pair to compare.</p>"
    disagreements = "".join(_disagreements_html(pair, report.dashboards) for pair in report.pairs)
    conflicts = "".join(
        f"<li>{_trajectory_link(c.trajectory_id, report.dashboards)}: "
        + esc(", ".join(f"{who} {value}" for who, value in c.labels.items())) + "</li>" for c in report.label_conflicts)
    problems = "".join(f"<li><code>{esc(problem)}</code></li>" for problem in report.problems)
    return (
        '<h2 id="agreement">Agreement between judges</h2>'
        "<style>table.confusion{border-collapse:collapse;margin:auto}table.confusion td,table.confusion th"
        "{border:1px solid #ddd;padding:1px 5px;font-size:12px}table.agreement{margin-top:12px}"
        ".agreement td.note{text-align:left}</style>"
        f'<table class="summary"><thead><tr><th>judge</th><th>kind</th><th>decided</th><th>unsure / no answer</th></tr></thead>'
        f"<tbody>{judges}</tbody></table>{pairs}"
        "<p class=note>Each pair is compared over the n trajectories both judges decided (success or failure); the rest "
        "are left out. Confusion: rows the reference's decision, columns the other's; S success, F failure. "
        "The reference (human, then checker, then model judges) is the truth for balanced accuracy (mean "
        "of the other judge's recall on the reference's successes and failures); agreement and κ are symmetric. The "
        "checker decides only trajectories whose task had a valid checker; people's labels are merged (latest per "
        "person; success against failure is unsure). The paper's Table 6 shape.</p>"
        + disagreements
        + (f"<h4 class=bad>Labels people disagree on (merged as unsure)</h4><ul>{conflicts}</ul>" if conflicts else "")
        + (f"<details><summary>{len(report.problems)} line(s) or record(s) skipped</summary><ul>{problems}</ul></details>"
           if problems else "")
    )
