"""`aui judge RUN_DIR`: judge every trajectory of a finished run; a thin wrapper over `judge.judge_run`.

Registered in `aui/_app.py` with `app.command("judge")(judge_command)`.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import typer
from rich.console import Console

from experiment import is_offline_provider
from llm import ModelClient, ModelConfigError, UnknownNameError
from verifier.judge import JUDGEMENTS_FILE, get_judge, judge_run

from ._options import MODELS_REGISTRY
from ._output import _fail, err_console

console = Console()


def judge_command(
    run_dir: Path = typer.Argument(..., help="A finished run folder (it has results.json)."),
    model: str = typer.Option("judge", "--model", help="A model role or name from the model registry, or 'offline' "
                              "(the text-only baseline: final page text vs the expected outcome's facts)."),
    mode: str = typer.Option("screenshot", "--mode", help="What a model judge sees: screenshot (the last one) or "
                             "flow (the dashboard, drawn without the checker's verdict)."),
    models_config: Path = MODELS_REGISTRY,
    concurrency: int = typer.Option(4, "--concurrency", min=1, help="Trajectories judged at once."),
) -> None:
    """Judge every trajectory of a finished run and append the verdicts to RUN_DIR/judgements.jsonl."""
    if not (run_dir / "results.json").is_file():
        raise _fail(f"{run_dir}: not a finished run folder (no results.json)")
    try:
        client = None if is_offline_provider("judge", model) else ModelClient(models_config)
        chosen = get_judge(model, mode, client)  # bad names, modes and unset key variables: refused here
    except (UnknownNameError, ModelConfigError, ValueError) as exc:
        raise _fail(str(exc))
    async def run():
        try:
            return await judge_run(run_dir, model, mode, client, concurrency=concurrency)
        finally:
            if client is not None:
                await client.aclose()

    try:
        judgements = asyncio.run(run())
    except (FileNotFoundError, ValueError) as exc:
        raise _fail(str(exc))

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
