"""Loading app specs from YAML: our format and the AUI-Gym `id/title/prompt/tags` format.

Loading never stops at the first bad file: every file is tried, and each failure becomes an
`AppLoadError` naming the file and the field, so one bad file does not hide the others.
"""

from __future__ import annotations

import copy
import functools
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from ._models import AppSpec, Domain

BUNDLED_DIR = Path(__file__).parent / "bundled"


@dataclass(frozen=True)
class AppLoadError:
    """Why one file could not be loaded."""

    path: Path
    field: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: field '{self.field}': {self.message}"


class AppSpecError(ValueError):
    """Raised when specs were asked for strictly and some did not load."""

    def __init__(self, errors: list[AppLoadError]):
        self.errors = errors
        super().__init__("\n".join(str(e) for e in errors))


@dataclass
class LoadResult:
    apps: list[AppSpec] = field(default_factory=list)
    errors: list[AppLoadError] = field(default_factory=list)

    def bad_files(self) -> dict[Path, str]:
        """One line per file that did not load: every problem of the file, in order."""
        by_file: dict[Path, list[str]] = {}
        for error in self.errors:
            by_file.setdefault(error.path, []).append(f"field '{error.field}': {error.message}")
        return {path: "; ".join(problems) for path, problems in by_file.items()}

    def raise_for_errors(self) -> list[AppSpec]:
        if self.errors:
            raise AppSpecError(self.errors)
        return self.apps


def app_ids_hint(path: Path | str) -> str:
    """What to add to "no specs at PATH" when PATH is a bare name: `--apps unit-converter` (or an old `--apps a,b`)
    is most likely app ids given as the folder of specs."""
    return "; to pick apps by id, name each with --app ID" if len(Path(path).parts) == 1 else ""


def spec_files(path: Path) -> list[Path]:
    """The YAML files under `path` (or `path` itself), in a stable order."""
    if path.is_file():
        return [path]
    if not path.is_dir():
        raise FileNotFoundError(f"no app specs at '{path}': not a file or directory{app_ids_hint(path)}")
    return sorted(p for p in path.rglob("*") if p.suffix in (".yaml", ".yml") and p.is_file())


def load_apps(path: Path | str = BUNDLED_DIR) -> LoadResult:
    """Load every app spec under `path`; ids must be unique across the set."""
    result = LoadResult()
    seen: dict[str, Path] = {}
    for file in spec_files(Path(path)):
        spec = _load_one(file, result.errors)
        if spec is None:
            continue
        if spec.id in seen:
            result.errors.append(AppLoadError(file, "id", f"'{spec.id}' is also defined in {seen[spec.id]}"))
            continue
        seen[spec.id] = file
        result.apps.append(spec)
    return result


def load_app(app_id: str, path: Path | str = BUNDLED_DIR) -> AppSpec:
    """One app by id; raises KeyError listing the known ids."""
    apps = {spec.id: spec for spec in load_apps(path).raise_for_errors()}
    if app_id not in apps:
        raise KeyError(f"no app '{app_id}' under {path} (known: {', '.join(apps)})")
    return apps[app_id]


def reference_html_path(spec: AppSpec) -> Path | None:
    """Absolute path of the spec's reference HTML, if it has one."""
    if not spec.reference_html or not spec.source:
        return None
    return (Path(spec.source).parent / spec.reference_html).resolve()


@functools.lru_cache(maxsize=512)
def _parsed_yaml(raw: bytes) -> object:
    """The YAML document in `raw`, parsed once per content (a sweep loads the same specs for every track and
    stage; PyYAML's pure-Python parser was 4.6 % of the loop's CPU in `make run`)."""
    return yaml.safe_load(raw.decode("utf-8"))


def _load_one(file: Path, errors: list[AppLoadError]) -> AppSpec | None:
    try:
        data = copy.deepcopy(_parsed_yaml(file.read_bytes()))  # a copy: the cached document stays as parsed
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        errors.append(AppLoadError(file, "<file>", f"not valid YAML: {exc}".splitlines()[0]))
        return None
    if not isinstance(data, dict):
        errors.append(AppLoadError(file, "<file>", "expected a mapping at the top level"))
        return None
    try:
        if "tags" in data and "domain" not in data:
            data = _from_aui_gym(data, file)
        spec = AppSpec.model_validate({**data, "source": str(file)})
    except AppSpecError as exc:
        errors.extend(exc.errors)
        return None
    except ValidationError as exc:
        errors.extend(AppLoadError(file, ".".join(str(part) for part in err["loc"]) or "<file>", err["msg"])
                      for err in exc.errors())
        return None
    ref = reference_html_path(spec)
    if ref is not None and not ref.is_file():
        errors.append(AppLoadError(file, "reference_html", f"file not found: {ref}"))
        return None
    return spec


def _from_aui_gym(data: dict[str, Any], file: Path) -> dict[str, Any]:
    """Map an AUI-Gym `examples/*.yaml` record to our AppSpec fields (AppSpecError naming the field)."""
    for key in ("id", "title", "prompt"):
        if not isinstance(data.get(key), str) or not data[key].strip():
            raise AppSpecError([AppLoadError(file, key, "missing or not a non-empty string")])
    tags = data.get("tags")
    if not isinstance(tags, list) or not tags:
        raise AppSpecError([AppLoadError(file, "tags", "missing or empty; expected one domain tag")])
    domains = [t for t in tags if t in Domain.__members__]
    if len(domains) != 1:
        known = ", ".join(Domain.__members__)
        raise AppSpecError([AppLoadError(file, "tags", f"expected exactly one domain tag among {known}, got {tags}")])
    return {"id": data["id"], "title": data["title"], "domain": domains[0], "prompt": data["prompt"].strip()}
