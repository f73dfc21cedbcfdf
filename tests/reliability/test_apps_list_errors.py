"""`aui apps list` on specs that do not load: one `error:` line per bad file, naming it and what is wrong."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

AUI = [sys.executable, "-m", "aui"]
ROOT = Path(__file__).resolve().parents[2]


def _bad_specs(folder: Path) -> dict[str, str]:
    """Three invalid spec files, and a word each error line must carry."""
    (folder / "a").mkdir()
    (folder / "a" / "app.yaml").write_text("id: a\ntitle: A\n")                     # no domain, no prompt
    (folder / "b.yaml").write_text("id: [b\n")                                       # not YAML
    (folder / "c.yaml").write_text("id: c\ntitle: C\ndomain: spaceship\nprompt: p\n")  # an unknown domain
    return {str(folder / "a" / "app.yaml"): "domain", str(folder / "b.yaml"): "not valid YAML", str(folder / "c.yaml"): "domain"}


def test_every_bad_file_gets_one_error_line_naming_it_and_no_empty_table(tmp_path):
    expected = _bad_specs(tmp_path)
    done = subprocess.run([*AUI, "apps", "list", str(tmp_path)], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == len(expected), done.stderr
    for path, word in expected.items():
        [line] = [e for e in errors if path in e]
        assert word in line, line
    assert "field 'prompt'" in next(e for e in errors if "a/app.yaml" in e), "every problem of a file on its one line"
    assert "┏" not in done.stdout, "no empty table"


def test_a_good_app_beside_bad_ones_is_listed_and_the_bad_ones_named(tmp_path):
    expected = _bad_specs(tmp_path)
    good = ROOT / "apps_prompts" / "bundled" / "unit-converter"
    (tmp_path / "unit-converter").mkdir()
    for name in ("app.yaml", "index.html"):
        (tmp_path / "unit-converter" / name).write_bytes((good / name).read_bytes())
    done = subprocess.run([*AUI, "apps", "list", str(tmp_path), "--json"], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 1 and '"unit-converter"' in done.stdout
    assert len([line for line in done.stderr.splitlines() if line.startswith("error:")]) == len(expected)
