"""The `aui` Typer app: every sub-command, assembled (the package docstring lists them)."""

from __future__ import annotations

import typer

from flows import configure_prefect_env

from ._apps import apps_app
from ._defects import defects_app
from ._export import export_command
from ._insights import insights_command
from ._labels import judge_command, label_app
from ._run import deploy, report, run, sweep_command, ui
from ._stages import comment_command, dashboard_command, rollout_command, verify_command
from ._variations import variation_table, variations_command
from ._view import serve_command, view_command

configure_prefect_env()

app = typer.Typer(
    help="AUI loop: computer-use agents judge and improve generated user interfaces.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)
app.add_typer(apps_app, name="apps")
app.add_typer(label_app, name="label")
app.add_typer(defects_app, name="defects")
app.command("run")(run)
app.command("sweep")(sweep_command)
app.command("report")(report)
app.command("view")(view_command)
app.command("serve", hidden=True)(serve_command)
app.command("ui")(ui)
app.command("deploy")(deploy)
app.command("verify")(verify_command)
app.command("rollout")(rollout_command)
app.command("dashboard")(dashboard_command)
app.command("comment")(comment_command)
app.command("judge")(judge_command)
app.command("variations")(variations_command)
app.command("insights")(insights_command)
app.command("export")(export_command)
