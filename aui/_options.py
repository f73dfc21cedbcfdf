"""Options several commands take with one meaning, declared once (the run's own are made from its config)."""

from __future__ import annotations

import typer

from apps_prompts import BUNDLED_DIR
from cua import DEFAULT_VIEWPORT, Viewport


def parse_viewport(value: str | Viewport) -> Viewport:
    """`--viewport 1024x768` → Viewport; a clear usage error otherwise."""
    if isinstance(value, Viewport):
        return value
    try:
        return Viewport.parse(value)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None


MODELS_REGISTRY = typer.Option(None, "--models", "--models-config",
                               help="Model registry YAML (default configs/models.yaml); as `aui run --models`.")
"""`--models-config`: the older name some commands had."""
VIEWPORT = typer.Option(str(DEFAULT_VIEWPORT), "--viewport", parser=parse_viewport,
                        help="Browser viewport WIDTHxHEIGHT (screenshots and model coordinates follow it).")
APP_ID = typer.Option(..., "--app", help="The app id (see `aui apps list`).")
SPECS = typer.Option(BUNDLED_DIR, "--apps", help="A spec file or folder of specs (default: bundled).")
APP_HTML = typer.Option(None, "--html", help="The app version to judge (default: the spec's reference HTML).")
VIEWER_PORT = typer.Option(8765, "--port", help="Port on 127.0.0.1 (the default is what Prefect artifacts link to).")
VIEWER_HOST = typer.Option("127.0.0.1", "--host", help="Interface to listen on (keep 127.0.0.1 unless you mean it).")
