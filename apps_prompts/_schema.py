"""JSON Schema of the app spec format, exported from the pydantic models."""

from __future__ import annotations

import json
from pathlib import Path

from ._models import LEGACY_LEVELS, AppSpec

SCHEMA_PATH = Path(__file__).parent / "app_spec.schema.json"


def app_spec_json_schema() -> dict:
    """The JSON Schema an `app.yaml` must satisfy (the `source` field is set by the loader)."""
    schema = AppSpec.model_json_schema()
    schema["properties"].pop("source", None)
    # Older files name levels easy / medium / hard; the loader reads them as wood / bronze / silver.
    level = schema["$defs"]["Task"]["properties"]["level"]
    level["anyOf"].insert(1, {"enum": sorted(LEGACY_LEVELS), "description": "Older names: easy → wood, medium → bronze, "
                              "hard → silver."})
    schema["$id"] = "https://aui-loop.dev/schemas/app_spec.schema.json"
    return schema


def write_schema(path: Path = SCHEMA_PATH) -> Path:
    path.write_text(json.dumps(app_spec_json_schema(), indent=2) + "\n", encoding="utf-8")
    return path
