"""The `aui` command: a thin layer over the library functions."""

from __future__ import annotations

import typer

from . import configure_prefect_env
from ._cli_apps import apps_app
from ._cli_run import deploy, report, run, serve, sweep_command, ui

configure_prefect_env()

app = typer.Typer(
    help="AUI loop: computer-use agents judge and improve generated user interfaces.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)
app.add_typer(apps_app, name="apps")
app.command("run")(run)
app.command("sweep")(sweep_command)
app.command("report")(report)
app.command("serve")(serve)
app.command("ui")(ui)
app.command("deploy")(deploy)


def _register_optional() -> None:
    """Commands of the other stages (each module owns its command)."""
    from ._cli_dashboard import comment_command, dashboard_command
    from ._cli_rollout import rollout_command
    from ._cli_verify import verify_command

    app.command("verify")(verify_command)
    app.command("rollout")(rollout_command)
    app.command("dashboard")(dashboard_command)
    app.command("comment")(comment_command)


_register_optional()


if __name__ == "__main__":
    app()
