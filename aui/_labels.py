"""Who judged a run's trajectories: `aui label import FILE [RUN_DIR]` (people's labels into its labels.jsonl),
`aui judge RUN_DIR` (a judge over every trajectory: `verifier.judge.judge_run`), and the agreement table `aui
report` prints."""

from __future__ import annotations

import asyncio
from collections import Counter
from pathlib import Path

import typer
from rich.markup import escape
from rich.table import Table

from experiment import is_offline_provider
from llm import ModelClient, ModelConfigError, UnknownNameError
from results import agreement_records
from verifier.judge import JUDGEMENTS_FILE, AgreementReport, LabelImportError, get_judge, import_labels, judge_run

from ._options import JUDGE, MODELS_REGISTRY, RUN_DIR, judged_at_once
from ._output import _fail, closing, console, err_console, exit_on

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


def judge_command(
    run_dir: Path = RUN_DIR,
    model: str = JUDGE,
    mode: str = typer.Option("screenshot", "--mode", help="What a model judge sees: screenshot (the last one) or "
                             "flow (the dashboard, drawn without the checker's verdict)."),
    models_config: Path = MODELS_REGISTRY,
    concurrency: int = judged_at_once(4),
) -> None:
    """Judge every trajectory of a finished run and append the verdicts to RUN_DIR/judgements.jsonl."""
    if not (run_dir / "results.json").is_file():
        raise _fail(f"{run_dir}: not a finished run folder (no results.json)")
    with exit_on(UnknownNameError, ModelConfigError, ValueError, offline="--judge offline"):
        client = None if is_offline_provider("judge", model) else ModelClient(models_config)
        chosen = get_judge(model, mode, client)  # bad names, modes and unset key variables: refused here
    with exit_on(FileNotFoundError, ValueError):
        judgements = asyncio.run(closing(client, judge_run(run_dir, model, mode, client, concurrency=concurrency)))

    answered = [j for j in judgements if j.success is not None]
    errors = [j for j in judgements if j.success is None]
    share = f"{sum(j.success for j in answered) / len(answered):.2f}" if answered else "–"
    label = f"{chosen.name} (offline baseline)" if chosen.offline else chosen.name
    console.print(f"judged {len(judgements)} trajectories with {label}, mode {chosen.mode}: {len(errors)} errors, "
                  f"success share {share} of {len(answered)} answered → {run_dir / JUDGEMENTS_FILE}", soft_wrap=True)
    if errors:
        err_console.print(f"first error ({errors[0].trajectory_id}): {errors[0].error}", soft_wrap=True)
    if judgements and not answered:
        raise typer.Exit(1)
