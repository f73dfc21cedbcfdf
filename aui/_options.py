"""Options several commands take with one meaning, declared once (the run's own are made from its config).

An option that is also a field of the run's config (`--apps`, `--app`, `--models`, `--viewport`) is made from that
field's flag and help (`experiment.config_flags`): every command says of it what `aui run` says.
"""

from __future__ import annotations

from typing import Any

import typer
from rich.markup import escape

from apps_prompts import BUNDLED_DIR
from cua import DEFAULT_VIEWPORT, Viewport
from experiment import config_flags


def parse_viewport(value: str | Viewport) -> Viewport:
    """`--viewport 1024x768` → Viewport; a clear usage error otherwise."""
    if isinstance(value, Viewport):
        return value
    try:
        return Viewport.parse(value)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None


def comma_list(value: str | None) -> list[str]:
    """`--types a, b,` → ["a", "b"]: the comma-separated values some options take, blanks dropped."""
    return [part.strip() for part in (value or "").split(",") if part.strip()]


def _from_config(field: str, default: Any, *aliases: str, **settings: Any) -> Any:
    """The option of the config's `field` (its flag and help) with this command's default."""
    flag = next(flag for flag in config_flags() if flag.field == field)
    return typer.Option(default, flag.flag, *aliases, help=escape(flag.help), **settings)


MODELS_REGISTRY = _from_config("models_config", None, "--models-config")  # the older name some commands had
VIEWPORT = _from_config("viewport", str(DEFAULT_VIEWPORT), parser=parse_viewport)
SPECS = _from_config("apps", BUNDLED_DIR)
DEFECT_SPECS = _from_config("apps", BUNDLED_DIR, "--apps-dir")  # the older name `defects inject` had
APP_IDS = _from_config("app_ids", None)
# The roles a one-stage command runs, named as `aui run` names them (the older `--model` / `--policy` still taken)
VERIFIER = _from_config("verifier", "offline", "--model")
CUA = _from_config("cua_policies", "heuristic", "--policy")
CUA_MODEL = _from_config("cua_model", None, "--model")
COMMENTER = _from_config("commenter", "commenter", "--model")
COMMENTER_MODE = _from_config("commenter_modes", "dashboard", "--mode")
JUDGE = _from_config("judge", "judge", "--model")
APP_ID = typer.Option(..., "--app", help="The app id (see `aui apps list`).")
SPEC_PATH = typer.Argument(BUNDLED_DIR, help="A spec file or a folder of them.")
TRAJECTORY_DIR = typer.Argument(..., help="A trajectory folder (trajectory.json + screenshots).")
RUN_DIR = typer.Argument(..., help="A finished run folder (it has results.json).")
APP_HTML = typer.Option(None, "--html", help="The app version to judge (default: the spec's reference HTML).")
VIEWER_PORT = typer.Option(8765, "--port", min=1, max=65535,
                           help="Port on 127.0.0.1 (the default is what Prefect artifacts link to).")
HOST = typer.Option("127.0.0.1", "--host", help="Interface to listen on (keep 127.0.0.1 unless you mean it).")


def judged_at_once(default: int) -> Any:
    """`--concurrency` of the commands that judge a run's trajectories (each its own default)."""
    return typer.Option(default, "--concurrency", min=1, help="Trajectories judged at once.")
