"""The `aui` command: a thin layer over the library functions."""

from __future__ import annotations

import typer

from ._cli_apps import apps_app

app = typer.Typer(
    help="AUI loop: computer-use agents judge and improve generated user interfaces.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)
app.add_typer(apps_app, name="apps")


if __name__ == "__main__":
    app()
