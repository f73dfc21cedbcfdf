"""`aui view [RUN_DIR …]`: the run viewer on this machine (and `aui serve`, its old name)."""

from __future__ import annotations

import getpass
import os
from pathlib import Path

import typer

from ._options import HOST, VIEWER_PORT
from ._output import _fail, check_port_free, console


def view_command(
    run_dirs: list[Path] = typer.Argument(None, help="Run folders or folders of runs (default: runs/)."),
    port: int = VIEWER_PORT,
    host: str = HOST,
    who: str = typer.Option(None, "--who", help="Name written with your labels (default: $AUI_LABELLER or your user name)."),
    blind: bool = typer.Option(True, "--blind/--no-blind", help="Hide the checker's verdict until you label a trajectory."),
) -> None:
    """Browse runs, step through trajectories, compare rounds and label (writes only labels.jsonl)."""
    from viewer import serve_viewer  # FastAPI and uvicorn load only when the viewer is served

    roots = list(run_dirs) if run_dirs else [Path("runs")]
    missing = [str(root) for root in roots if not root.is_dir()]
    if missing:
        raise _fail(f"not a folder: {', '.join(missing)}")
    labeller = who or os.environ.get("AUI_LABELLER") or getpass.getuser() or "someone"

    def ready(url: str) -> None:
        console.print(f"AUI loop viewer: [bold]{url}[/] (runs under {', '.join(map(str, roots))}; labels as "
                      f"'{labeller}'{', blind' if blind else ''}; Ctrl-C to stop)", soft_wrap=True, highlight=False)

    check_port_free(host, port)
    serve_viewer(roots, who=labeller, host=host, port=port, blind=blind, on_ready=ready)


def serve_command(run_dir: Path = typer.Argument(..., help="A run folder or runs/."),
                  port: int = VIEWER_PORT, host: str = HOST) -> None:
    """The viewer over one folder (the old name of `aui view`)."""
    view_command([run_dir], port=port, host=host, who=None, blind=True)
