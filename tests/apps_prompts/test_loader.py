"""App specs: loading our format and AUI-Gym's, errors that name the file and field, the schema."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import jsonschema
import pytest
import yaml

from apps_prompts import BUNDLED_DIR, AppSpec, Domain, app_spec_json_schema, load_app, load_apps
from apps_prompts._schema import SCHEMA_PATH

GOOD_SPEC = """
id: tiny
title: Tiny
domain: tool
prompt: {name: Tiny, goal: Be tiny., features: [One button], theme: Plain}
reference_html: index.html
tasks:
  - id: press
    description: Press the button.
    expected_outcome: The label says pressed.
    checker: "return document.querySelector('#out').textContent === 'pressed';"
    solution: [{action: click, selector: "#go"}]
"""


def write_app(folder: Path, spec: str, html: str = "<button id=go>Go</button><p id=out></p>") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "app.yaml").write_text(spec)
    (folder / "index.html").write_text(html)
    return folder / "app.yaml"


def test_a_valid_spec_loads_with_its_tasks_and_reference_html(tmp_path):
    write_app(tmp_path / "tiny", GOOD_SPEC)
    result = load_apps(tmp_path)
    assert result.errors == []
    [spec] = result.apps
    assert spec.domain is Domain.tool and spec.task("press").solution[0].selector == "#go"
    assert "Features:\n- One button" in spec.prompt_text()


def test_a_malformed_file_names_the_file_and_field_and_does_not_hide_the_others(tmp_path):
    write_app(tmp_path / "good", GOOD_SPEC)
    bad = write_app(tmp_path / "bad", GOOD_SPEC.replace("domain: tool", "domain: spaceship").replace("id: tiny", "id: bad"))
    broken = tmp_path / "broken.yaml"
    broken.write_text("id: [unclosed\n")
    result = load_apps(tmp_path)
    assert [a.id for a in result.apps] == ["tiny"]
    by_path = {e.path: e for e in result.errors}
    assert by_path[bad].field == "domain" and "spaceship" not in by_path[bad].field
    assert by_path[broken].field == "<file>" and "YAML" in by_path[broken].message
    assert str(bad) in str(by_path[bad])


def test_duplicate_task_ids_are_rejected_with_the_id(tmp_path):
    spec = GOOD_SPEC + """  - id: press
    description: Again.
    expected_outcome: Same.
"""
    write_app(tmp_path / "dup", spec)
    [error] = load_apps(tmp_path).errors
    assert error.field == "tasks" and "duplicate task id 'press'" in error.message


def test_missing_reference_html_is_an_error_naming_the_field(tmp_path):
    path = write_app(tmp_path / "x", GOOD_SPEC)
    (path.parent / "index.html").unlink()
    [error] = load_apps(tmp_path).errors
    assert error.field == "reference_html"


def test_load_app_by_unknown_id_lists_known_ids(tmp_path):
    write_app(tmp_path / "tiny", GOOD_SPEC)
    with pytest.raises(KeyError, match="known: tiny"):
        load_app("nope", tmp_path)


def test_aui_gym_files_import_with_domains_from_tags(shared_data):
    result = load_apps(shared_data / "aui-gym-apps")
    assert result.errors == []
    counts = Counter(a.domain.value for a in result.apps)
    assert counts == {"app": 11, "landing": 10, "game": 9, "interactive": 9, "tool": 7, "utility": 6}


def test_aui_gym_file_without_domain_tag_names_tags_field(tmp_path):
    (tmp_path / "x.yaml").write_text("id: x\ntitle: X\nprompt: Make X\ntags: [fancy]\n")
    (tmp_path / "y.yaml").write_text("id: y\ntitle: Y\ntags: [game]\n")
    errors = {e.path.name: e for e in load_apps(tmp_path).errors}
    assert errors["x.yaml"].field == "tags"
    assert errors["y.yaml"].field == "prompt"


def test_exported_schema_is_committed_and_accepts_bundled_specs():
    schema = app_spec_json_schema()
    assert json.loads(SCHEMA_PATH.read_text()) == schema, "run: python -c 'from apps_prompts._schema import write_schema; write_schema()'"
    specs = sorted(BUNDLED_DIR.glob("*/app.yaml"))
    assert specs, f"no bundled app spec under {BUNDLED_DIR}: the schema would have accepted nothing"
    for path in specs:
        jsonschema.validate(yaml.safe_load(path.read_text()), schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"id": "x", "title": "X", "domain": "nope", "prompt": "p"}, schema)


def test_bundled_set_covers_all_domains_with_enough_proven_tasks():
    apps = load_apps(BUNDLED_DIR).raise_for_errors()
    assert len(apps) >= 10
    assert {a.domain for a in apps} == set(Domain)
    for spec in apps:
        assert len(spec.tasks) >= 5, spec.id
        assert len({t.category for t in spec.tasks}) >= 2, f"{spec.id}: tasks should mix categories"
        for task in spec.tasks:
            assert task.checker and task.solution, f"{spec.id}/{task.id} lacks a checker or solution"
        assert isinstance(spec.prompt, AppSpec.model_fields["prompt"].annotation.__args__[0])
