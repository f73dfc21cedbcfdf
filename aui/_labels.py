"""`aui label import FILE [RUN_DIR]`: people's labels into a run's labels.jsonl; the agreement table `aui report` prints."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import typer
from rich.markup import escape
from rich.table import Table

from results import pct
from verifier.judge import AgreementReport, LabelImportError, import_labels

from ._output import _fail, console, err_console

label_app = typer.Typer(help="People's labels of a run's trajectories (labels.jsonl).", no_args_is_help=True)


@label_app.command("import")
def import_command(file: Path = typer.Argument(..., help="Labels as .csv (header trajectory_id,label,note,who,when; "
                                               "note and when optional) or .jsonl (one label object a line)."),
                   run_dir: Path = typer.Argument(Path("."), help="The finished run folder (with results.json) the labels are about.")) -> None:
    """Validate a labels file against the run and append it to RUN_DIR/labels.jsonl — all of it, or nothing if a line is bad."""
    try:
        labels = import_labels(file, run_dir)
    except LabelImportError as exc:
        for line in exc.listing:
            err_console.print(escape(line), soft_wrap=True, highlight=False)
        raise _fail(f"{file}: {len(exc.problems)} problem(s) (listed above); nothing appended to {run_dir / 'labels.jsonl'}") from None
    except (FileNotFoundError, ValueError) as exc:
        raise _fail(str(exc)) from None
    people = Counter(label.who for label in labels)
    by_person = ", ".join(f"{who} {count}" for who, count in sorted(people.items()))
    console.print(f"appended {len(labels)} label(s) to {run_dir / 'labels.jsonl'} from {len(people)} person(s): {escape(by_person)}",
                  highlight=False)


def agreement_table(report: AgreementReport) -> Table:
    """Every pair of judges: n, left out, agreement, κ, balanced accuracy, the confusion counts (S→F and F→S disagree)."""
    table = Table(title="Agreement between judges (paper Table 6 shape)",
                  caption="over trajectories both decided · left out: unsure / one judge only · "
                          "S→F: reference success, other failure (S success, F failure)")
    for column in ("reference", "other", "n", "left out", "agreement %", "κ", "bal. acc. %", "S→S", "S→F", "F→S", "F→F", "notes"):
        table.add_column(column, justify="left" if column in ("reference", "other", "notes") else "right")
    for pair in report.pairs:
        counts = pair.confusion
        notes = "; ".join(note for note in (pair.reason, pair.kappa_note, pair.balanced_accuracy_note) if note)
        table.add_row(
            escape(pair.reference), escape(pair.other), str(pair.n), f"{pair.left_out_unsure} / {pair.left_out_missing}",
            pct(pair.agreement), "–" if pair.kappa is None else f"{pair.kappa:.3f}", pct(pair.balanced_accuracy),
            str(counts.success_success), str(counts.success_failure), str(counts.failure_success), str(counts.failure_failure),
            escape(notes))
    return table


