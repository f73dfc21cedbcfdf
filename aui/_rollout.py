"""`aui rollout`: one agent, one task, one app — prints the termination reason and step count.

Registered in `aui/_app.py` with `app.command("rollout")(rollout_command)`.
"""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.console import Console

from apps_prompts import load_app, reference_html_path
from cua import BrowserConfig, RolloutConfig, Viewport, rollout, write_tuples
from cua.policies import get_policy
from verifier import rollout_checker

from ._options import APP_HTML, APP_ID, MODELS_REGISTRY, SPECS, VIEWPORT
from ._output import _fail, err_console, in_browser

console = Console()


def rollout_command(
    app_id: str = APP_ID,
    task_id: str = typer.Option(..., "--task", help="Task id within the app."),
    policy: str = typer.Option("heuristic", "--policy", help="heuristic | uitars | openai-cua"),
    out: Path = typer.Option(..., "--out", help="Folder for trajectory.json and the step screenshots."),
    model: str = typer.Option(None, "--model", help="Model name or role in the model registry (model policies)."),
    html: Path = APP_HTML,
    apps: Path = SPECS,
    models: Path = MODELS_REGISTRY,
    max_steps: int = typer.Option(20, "--max-steps", min=1, help="Step limit (the paper uses 20)."),
    trace: bool = typer.Option(False, "--trace", help="Also record a Playwright trace.zip."),
    viewport: Viewport = VIEWPORT,
    as_json: bool = typer.Option(False, "--json", help="Print a JSON summary instead of text."),
) -> None:
    """Run one rollout of a task with its reference checker and print how it ended."""
    try:
        spec = load_app(app_id, apps)
        task = spec.task(task_id)
    except (KeyError, FileNotFoundError, ValueError) as exc:
        raise _fail(str(exc).strip("'"))
    html_path = html or reference_html_path(spec)
    if html_path is None or not Path(html_path).is_file():
        raise _fail(f"no app HTML for '{app_id}': give --html PATH (the spec has no reference_html)")
    if not task.checker:
        err_console.print(f"[yellow]warning:[/] task '{task_id}' has no reference checker; it cannot succeed")

    try:
        agent = get_policy(policy, model=model, models_path=str(models) if models else None)
        checker = rollout_checker(task.checker)  # reference checkers may be rules: compiled here
    except Exception as exc:  # unknown name, bad model entry, missing key variable, a checker that does not compile
        raise _fail(f"policy '{policy}': {exc}")

    config = RolloutConfig(max_steps=max_steps, trace=trace, browser=BrowserConfig(viewport=viewport))
    trajectory = in_browser(rollout(Path(html_path).read_text(encoding="utf-8"), task.description, agent, checker, out,
                                    config, app_id=spec.id, task_id=task.id, expected_outcome=task.expected_outcome))
    tuples = write_tuples(trajectory, out)  # the transition tuples (before, action, after) of every step
    summary = {
        "app": spec.id,
        "task": task.id,
        "policy": policy,
        "termination": trajectory.termination.value if trajectory.termination else None,
        "success": trajectory.success,
        "steps": len(trajectory.steps),
        "error": trajectory.error,
        "trajectory": str(out / "trajectory.json"),
        "tuples": str(tuples),
    }
    if as_json:
        print(json.dumps(summary))
    else:
        colour = "green" if trajectory.success else "yellow"
        console.print(
            f"[{colour}]{summary['termination']}[/] after {summary['steps']} step(s) — {spec.id}/{task.id} "
            f"with {policy}; trajectory: {summary['trajectory']}",
            soft_wrap=True,
        )
        if trajectory.error:
            console.print(f"  reason: {trajectory.error}", soft_wrap=True)
    raise typer.Exit(1 if summary["termination"] == "error" else 0)
