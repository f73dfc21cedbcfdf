"""Every benchmark starts the way `make bench` starts it (issue 38 §6).

`make bench` runs `python bench/NAME.py`, which puts `bench/` first on `sys.path`: a bench file named like
a package of the project (`bench/insights.py` once) is then imported instead of the package by every
other script, and three benchmarks died at import while the suite stayed green. Here each script is started
with `--help` by an interpreter whose path begins with `bench/`, exactly as `make bench` has it; its
top-level imports run, then argparse prints the usage and exits 0. One interpreter starts them all, one
after the other (the imports they share load once: 17 interpreters would cost a minute of the suite).
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "bench"

# Run in a fresh interpreter: for each script, the path `python bench/NAME.py` has (bench/ first), `--help`.
_START_EACH = textwrap.dedent("""
    import contextlib, io, json, runpy, sys, traceback
    scripts, base_path = json.loads(sys.argv[1]), list(sys.path[1:])
    outcome = {}
    for script in scripts:
        sys.path[:] = [str(__import__("pathlib").Path(script).parent), *base_path]
        sys.argv = [script, "--help"]
        usage = io.StringIO()
        try:
            with contextlib.redirect_stdout(usage):
                runpy.run_path(script, run_name="__main__")
            outcome[script] = "ran to its end without printing a usage: give it an argparse --help"
        except SystemExit as stop:
            outcome[script] = "ok" if stop.code in (0, None) and "usage:" in usage.getvalue() else (
                f"exit {stop.code}: {usage.getvalue()[-300:]}")
        except BaseException:
            outcome[script] = traceback.format_exc(limit=3)[-800:]
    print(json.dumps(outcome))
""")


def bench_scripts() -> list[Path]:
    return sorted(BENCH.glob("*.py"))


def project_packages() -> set[str]:
    return {path.parent.name for path in ROOT.glob("*/__init__.py")}


def test_no_bench_script_is_named_like_a_package_of_the_project():
    shadowing = sorted(path.name for path in bench_scripts() if path.stem in project_packages())
    assert shadowing == [], f"{shadowing}: run from bench/, each would be imported instead of the package"


def test_every_bench_script_imports_and_prints_its_usage():
    scripts = [str(path) for path in bench_scripts()]
    assert len(scripts) >= 10, scripts  # the benchmarks are there to be started
    done = subprocess.run([sys.executable, "-c", _START_EACH, json.dumps(scripts)], cwd=ROOT, capture_output=True,
                          text=True, timeout=240)
    assert done.returncode == 0, done.stderr[-2000:]
    outcome = json.loads(done.stdout.strip().splitlines()[-1])
    failed = {Path(script).name: why for script, why in outcome.items() if why != "ok"}
    assert failed == {} and len(outcome) == len(scripts)


def test_the_start_check_catches_a_script_that_a_bench_file_shadows(tmp_path):
    """The trap itself, planted: a bench folder holding `insights.py` beside a script that imports the package."""
    bench = tmp_path / "bench"
    bench.mkdir()
    (bench / "insights.py").write_text("from insights import insights_of  # the package, the author meant\n")
    (bench / "uses_insights.py").write_text("import argparse\nimport insights\nargparse.ArgumentParser().parse_args()\n")
    done = subprocess.run([sys.executable, "-c", _START_EACH, json.dumps([str(bench / "uses_insights.py")])],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    outcome = json.loads(done.stdout.strip().splitlines()[-1])
    assert "ImportError" in outcome[str(bench / "uses_insights.py")]
