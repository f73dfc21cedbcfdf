"""No document of the product names the development data folder (`../shared`): a user has none. The README,
`docs/` and the help text of every `aui` sub-command send them to `aui apps fetch` instead."""

from __future__ import annotations

import re
from pathlib import Path

import typer
from typer.testing import CliRunner

from aui import app as cli

ROOT = Path(__file__).resolve().parents[2]
DEVELOPMENT_DATA = re.compile(r"\.\./shared|shared/data")


def mentions_in_documents(root: Path = ROOT) -> list[str]:
    """`file:line` for every line of README.md and docs/**/*.md naming the development data."""
    files = [root / "README.md", *sorted((root / "docs").rglob("*.md"))]
    return [f"{file.relative_to(root)}:{number}" for file in files if file.is_file()
            for number, line in enumerate(file.read_text(encoding="utf-8").splitlines(), 1) if DEVELOPMENT_DATA.search(line)]


def command_paths(app: typer.Typer) -> list[list[str]]:
    """Every command and group of the app (hidden ones too), as the words a user types after `aui`."""
    paths: list[list[str]] = []

    def walk(command, path: list[str]) -> None:
        paths.append(path)
        if hasattr(command, "commands"):  # a group (Typer's own Click: not `click.Group`)
            for name, sub in sorted(command.commands.items()):
                walk(sub, [*path, name])

    walk(typer.main.get_command(app), [])
    return paths


def mentions_in_help(app: typer.Typer) -> list[str]:
    """`aui … --help` for every command whose help names the development data."""
    found = []
    for path in command_paths(app):
        result = CliRunner().invoke(app, [*path, "--help"], terminal_width=400)
        assert result.exit_code == 0, (path, result.output)
        if DEVELOPMENT_DATA.search(result.output):
            found.append(" ".join(["aui", *path, "--help"]))
    return found


def test_readme_and_docs_never_name_the_development_data():
    assert mentions_in_documents() == []


def test_no_aui_help_text_names_the_development_data():
    paths = command_paths(cli)
    assert ["apps", "fetch"] in paths and ["run"] in paths and len(paths) > 20
    assert mentions_in_help(cli) == []


def test_the_scans_catch_a_mention(tmp_path):
    (tmp_path / "docs" / "deep").mkdir(parents=True)
    (tmp_path / "README.md").write_text("# x\nrun --apps ../shared/data/aui-gym-apps\n")
    (tmp_path / "docs" / "deep" / "page.md").write_text("fine\nfine\nsee shared/data\n")
    assert mentions_in_documents(tmp_path) == ["README.md:2", "docs/deep/page.md:3"]
    planted = typer.Typer()
    tools = typer.Typer()
    planted.add_typer(tools, name="tools")

    @tools.command("go")
    def go(apps: str = typer.Option("", help="e.g. ../shared/data/gpt5-apps")) -> None:
        """Go."""

    @planted.command("other")
    def other() -> None:
        """Nothing to see."""

    assert mentions_in_help(planted) == ["aui tools go --help"]
