"""`aui apps …` as a user runs it: a real process, real Chromium."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from apps_prompts import BUNDLED_DIR
from tests.apps_prompts.test_loader import GOOD_SPEC, write_app

AUI = [sys.executable, "-m", "aui"]


def run_aui(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*AUI, *args], capture_output=True, text=True, timeout=1100)


def test_list_json_has_id_domain_tasks_for_every_bundled_app():
    proc = run_aui("apps", "list", "--json")
    assert proc.returncode == 0, proc.stderr
    rows = json.loads(proc.stdout)
    assert len(rows) >= 10
    assert all(set(row) == {"id", "domain", "tasks"} for row in rows)
    assert all(row["tasks"] >= 5 for row in rows)


@pytest.mark.timeout(1200)
def test_validate_proves_a_bundled_app_in_chromium():
    # The command on one bundled app (with a question task); every bundled task is proven by
    # tests/verifier/test_gate.py (per app) and, through a model's reply, tests/verifier/test_bundled_proofs.py.
    proc = run_aui("apps", "validate", str(BUNDLED_DIR / "trip-splitter"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "0 failing, 0 file errors" in proc.stdout and "1 apps" in proc.stdout


def test_validate_reports_a_checker_true_at_load_and_exits_nonzero(tmp_path):
    write_app(tmp_path / "tiny", GOOD_SPEC.replace("=== 'pressed'", "!== 'pressed'"))
    proc = run_aui("apps", "validate", str(tmp_path))
    assert proc.returncode == 1
    assert "FAIL tiny/press" in proc.stdout and "already true" in proc.stdout


def test_validate_passes_a_correct_spec(tmp_path):
    html = "<button id=go onclick=\"document.getElementById('out').textContent='pressed'\">Go</button><p id=out></p>"
    write_app(tmp_path / "tiny", GOOD_SPEC, html)
    proc = run_aui("apps", "validate", str(tmp_path))
    assert proc.returncode == 0, proc.stdout
    assert "1 tasks: 1 proved" in proc.stdout


def test_import_reports_counts_per_domain(shared_data):
    proc = run_aui("apps", "import", str(shared_data / "aui-gym-apps"))
    assert proc.returncode == 0, proc.stderr
    assert "52 apps imported" in proc.stdout
    for domain, count in {"app": 11, "landing": 10, "game": 9, "interactive": 9, "tool": 7, "utility": 6}.items():
        assert f"{domain}" in proc.stdout and f" {count} " in proc.stdout


def test_import_of_a_bad_file_exits_nonzero_naming_file_and_field(tmp_path):
    (tmp_path / "good.yaml").write_text("id: g\ntitle: G\nprompt: Make G\ntags: [tool]\n")
    (tmp_path / "bad.yaml").write_text("id: b\ntitle: B\nprompt: Make B\ntags: []\n")
    proc = run_aui("apps", "import", str(tmp_path))
    assert proc.returncode == 1
    assert "bad.yaml" in proc.stderr and "'tags'" in proc.stderr
    assert "1 apps imported" in proc.stdout
