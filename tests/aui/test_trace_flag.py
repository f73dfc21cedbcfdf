"""`--trace` on `aui run` / `aui sweep`: it reaches the run's config, and a bad value is one error line."""

from pathlib import Path

import pytest
from typer.testing import CliRunner

from aui import _run
from aui import app as cli

APP = "unit-converter"
EXAMPLE = str(Path(__file__).resolve().parents[2] / "configs" / "sweep.example.yaml")


@pytest.mark.parametrize("argv, expected", [
    (["run", "--offline", "--app", APP, "--trace", "all"], "all"),
    (["run", "--offline", "--app", APP, "--trace", "off"], "off"),
    (["run", "--offline", "--app", APP], "off"),  # the default
    (["sweep", EXAMPLE, "--trace", "all"], "all"),  # the file says off: the flag wins
    (["sweep", EXAMPLE], "off"),
    (["run", "--config", EXAMPLE, "--trace", "failures"], "failures"),
])
def test_the_trace_flag_reaches_the_runs_config(monkeypatch, argv, expected):
    seen = []
    monkeypatch.setattr(_run, "_execute", lambda config, *args, **kwargs: seen.append(config))
    result = CliRunner().invoke(cli, argv)
    assert result.exit_code == 0, result.output
    assert [config.trace for config in seen] == [expected]


def test_a_bad_trace_flag_is_one_error_line():
    result = CliRunner().invoke(cli, ["run", "--offline", "--trace", "sometimes"])
    assert result.exit_code == 2
    assert "error:" in result.output and "trace" in result.output
