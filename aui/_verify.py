"""`aui verify`: judge one app's tasks, print FC and the per-task verdicts, write verdicts.json."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console
from rich.table import Table

from apps_prompts import load_app
from experiment import is_offline_provider
from llm import ModelConfigError, get_client
from verifier import LLMVerifierConfig, function_completeness, function_completeness_proven, verify_app

from ._options import APP_HTML, APP_ID, MODELS_REGISTRY, SPECS
from ._output import _fail, err_console, in_browser

console = Console()


def verify_command(
    app_id: str = APP_ID,
    apps: Path = SPECS,
    html: Path = APP_HTML,
    model: str = typer.Option("offline", "--model", help="'offline' (reference checkers) or a model name / role."),
    out: Path = typer.Option(..., "--out", help="Folder for verdicts.json."),
    models_config: Path = MODELS_REGISTRY,
    batch_size: int = typer.Option(10, "--batch-size", min=1, help="Tasks per model conversation."),
    screenshot: bool = typer.Option(False, "--screenshot", help="Show the model a screenshot of the loaded app."),
) -> None:
    """Decide per task whether the app supports it, gate each checker, and report Function Completeness."""
    try:
        spec = load_app(app_id, apps)
    except (KeyError, FileNotFoundError, ValueError) as exc:
        raise _fail(str(exc))
    if html is not None and not html.is_file():
        raise _fail(f"--html: no file at {html}")
    client = None
    if not is_offline_provider("verifier", model):
        try:
            client = get_client(models_config)
            client.registry.model_name(model)
        except ModelConfigError as exc:
            raise _fail(str(exc))
    config = LLMVerifierConfig(batch_size=batch_size, screenshot=screenshot)

    try:
        verdicts = in_browser(verify_app(spec, html.read_text(encoding="utf-8") if html is not None else None,
                                         verifier=model, client=client, config=config, out_dir=out))
    except ValueError as exc:  # no HTML to judge; a model entry or ${ENV} key missing
        raise _fail(str(exc))
    except RuntimeError as exc:  # llm.ModelCallError: the model failed for good after retries
        err_console.print(f"[red]model call failed:[/] {exc}", soft_wrap=True)
        raise typer.Exit(1)

    table = Table("task", "solvable", "kind", "gate", "proof", "reasons / warnings", title=f"{spec.id} — verifier: {verdicts.verifier}")
    proof_style = {"proven": "[green]proven[/]", "claimed": "[yellow]claimed[/]", "unsupported": "[red]unsupported[/]"}
    for verdict in verdicts.verdicts:
        gate = "—" if verdict.gate is None else ("[green]pass[/]" if verdict.gate.accepted else "[red]fail[/]")
        notes = "; ".join(verdict.reasons + [f"[yellow]{w}[/]" for w in verdict.warnings])
        table.add_row(
            verdict.task_id,
            "[green]yes[/]" if verdict.valid else "[red]no[/]",
            verdict.checker_kind or "—",
            gate,
            proof_style.get(verdict.proof, verdict.proof),
            notes if verdict.proven else "; ".join(filter(None, [notes, verdict.proof_reason])),
        )
    console.print(table)
    rate = function_completeness(verdicts)
    tokens = verdicts.tokens
    spent = f", {tokens.total_tokens} tokens in {tokens.calls} call(s)" if tokens.calls else ""
    console.print(f"Function Completeness: [bold]{rate}[/] · proven: [bold]{function_completeness_proven(verdicts)}[/]{spent}")
    console.print(f"wrote {out / 'verdicts.json'}")
