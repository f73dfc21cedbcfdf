"""The README's training-style loop over the environments runs as written and prints what the README shows."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HEADING = "## Every app a Gymnasium environment"


def readme_loop() -> tuple[str, str]:
    """The first ```python block of the README section under HEADING, and the plain ``` block after it (its output)."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert HEADING in readme, f"README.md has no section {HEADING!r}"
    section = readme.split(HEADING, 1)[1].split("\n## ", 1)[0]
    found = re.search(r"^```python\n(.*?)^```\n\n^```\n(.*?)^```", section, re.DOTALL | re.MULTILINE)
    assert found, f"the README section {HEADING!r} has no ```python block followed by its output"
    return found.group(1), found.group(2)


def test_the_readme_loop_runs_and_prints_what_the_readme_says(tmp_path):
    code, printed = readme_loop()
    assert len(code.strip().splitlines()) <= 16 and "env.step(" in code and "env.reset(seed=" in code
    environment = {**os.environ, "PYTHONPATH": str(ROOT)}  # this checkout, run from elsewhere as a reader would
    completed = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=environment, capture_output=True,
                               text=True, timeout=300)
    assert completed.returncode == 0, completed.stderr[-3000:]
    assert completed.stdout.strip().splitlines() == printed.strip().splitlines()
