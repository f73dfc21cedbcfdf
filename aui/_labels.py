"""`aui label import FILE [RUN_DIR]`: people's labels into a run's labels.jsonl; the agreement table `aui report` prints."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import typer
from rich.markup import escape
from rich.table import Table

from results import agreement_records
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
    """Every pair of judges: `results.agreement_records`' cells (S→F and F→S disagree)."""
    table = Table(title="Agreement between judges (paper Table 6 shape)",
                  caption="over trajectories both decided · left out: unsure / one judge only · "
                          "S→F: reference success, other failure (S success, F failure)")
    for column in ("reference", "other", "n", "left out", "agreement %", "κ", "bal. acc. %", "S→S", "S→F", "F→S", "F→F", "notes"):
        table.add_column(column, justify="left" if column in ("reference", "other", "notes") else "right")
    for record in agreement_records(report):
        table.add_row(*(escape(cell) for cell in record.values()))
    return table
