"""`aui dashboard` and `aui comment`: render a trajectory's dashboard, comment on a trajectory.

Thin wrappers over `dashboard_render` and `commenter`; wired into `aui` with
`app.command("dashboard")(dashboard_command)` and `app.command("comment")(comment_command)`.
"""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.console import Console

from commenter import get_commenter
from cua import Trajectory
from dashboard_render import DASHBOARD_FILE, account_trajectory, render_trajectory
from experiment import is_offline_provider
from llm import ModelClient, ModelConfigError, UnknownNameError

from ._options import MODELS_REGISTRY
from ._output import _fail, err_console, in_browser

console = Console()

_HTML_NAMES = ("app.html", "index.html")


def _load_trajectory_or_exit(folder: Path):
    try:
        return Trajectory.load(folder)
    except (FileNotFoundError, ValueError) as exc:
        raise _fail(str(exc))


def dashboard_command(
    trajectory_dir: Path = typer.Argument(..., help="A trajectory folder (trajectory.json + screenshots)."),
    out: Path = typer.Option(None, "--out", help="PNG to write; default TRAJECTORY_DIR/dashboard.png."),
    as_json: bool = typer.Option(False, "--json", help="Print a JSON summary (path, tiles, tokens) instead of text."),
) -> None:
    """Render a trajectory as one 1920×1080 dashboard PNG and report its visual-token savings."""
    trajectory = _load_trajectory_or_exit(trajectory_dir)
    target = out or trajectory_dir / DASHBOARD_FILE
    rendered = render_trajectory(trajectory, trajectory_dir, target)
    account = account_trajectory(trajectory_dir)
    summary = {
        "path": str(rendered.path),
        "steps": len(trajectory.steps),
        "grid": f"{rendered.layout.columns}x{rendered.layout.rows}",
        "min_crop_scale": rendered.layout.min_action_scale,
        "tokens": {
            "raw_qwen": account.raw_qwen,
            "dashboard_qwen": account.dashboard_qwen,
            "reduction_qwen": round(account.reduction_qwen, 4),
            "raw_openai": account.raw_openai,
            "dashboard_openai": account.dashboard_openai,
            "reduction_openai": round(account.reduction_openai, 4),
        },
    }
    if as_json:
        print(json.dumps(summary))
        return
    console.print(f"wrote [bold]{rendered.path}[/] — {summary['steps']} steps, grid {summary['grid']}", soft_wrap=True)
    console.print(
        f"visual tokens: Qwen2.5-VL {account.raw_qwen} → {account.dashboard_qwen} ({account.reduction_qwen:.1%} fewer), "
        f"OpenAI high-detail {account.raw_openai} → {account.dashboard_openai} ({account.reduction_openai:.1%} fewer)"
    )


def comment_command(
    trajectory_dir: Path = typer.Argument(..., help="A trajectory folder (trajectory.json + screenshots)."),
    model: str = typer.Option("commenter", "--model", help="A model role or name from the model registry, or 'offline'."),
    mode: str = typer.Option("dashboard", "--mode", help="What the model sees: dashboard, text-only or screenshots-only."),
    html: Path = typer.Option(
        None, "--html", help="The app's HTML (the offline commenter measures it); default app.html/index.html in the folder."
    ),
    models_config: Path = MODELS_REGISTRY,
    out: Path = typer.Option(None, "--out", help="Write the comment JSON here instead of printing it."),
) -> None:
    """Comment on one trajectory: JSON with issues, actionable_changes, fit_within_screen, avoid_regressions."""
    _load_trajectory_or_exit(trajectory_dir)
    html_path = html or next((trajectory_dir / n for n in _HTML_NAMES if (trajectory_dir / n).is_file()), None)
    if html is not None and not html.is_file():
        raise _fail(f"--html {html}: no such file")
    try:
        client = None if is_offline_provider("commenter", model) else ModelClient(models_config)
        commenter = get_commenter(model, client=client, mode=mode)
    except (UnknownNameError, ModelConfigError) as exc:
        raise _fail(str(exc))
    if commenter.offline and html_path is None:
        err_console.print("[yellow]note:[/] no app HTML (--html): the offline commenter uses the trajectory only")

    result = in_browser(commenter.comment(trajectory_dir,
                                          html=html_path.read_text(encoding="utf-8") if html_path else None))
    text = result.model_dump_json(indent=2, exclude={"raw_replies"} if result.comment is not None else set())
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text + "\n", encoding="utf-8")
        console.print(f"wrote {out}")
    else:
        print(text)
    if result.comment is None:
        err_console.print(f"[red]no valid comment:[/] {result.error}", soft_wrap=True)
        raise typer.Exit(1)
