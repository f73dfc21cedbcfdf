"""The dataset card (`README.md`) of an exported dataset: its YAML header in Hugging Face's convention (the configs,
one per table), what made the data — offline providers said plainly — the inputs' licences, and every table's
schema, made from the same column table the Parquet files are (`results._export_columns`).
"""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from apps_prompts import BUNDLED_DIR, SOURCE_RECORD, known_benchmarks

from ._export_columns import CHANGE_FIELDS, COLUMNS, TABLES
from ._export_rows import RunSource

TASK_CATEGORIES = ["image-text-to-text"]
_TAGS = ["computer-use", "gui-agent", "web-agent", "trajectories", "aui-gym", "generative-ui"]
_ABOUT = {
    "steps": "one row per agent step: the screenshot the agent acted on, the action in three forms, thought, reward",
    "tasks": "one row per task of every app version: checker, proof, reference solution",
    "revisions": "one row per revision: feedback, change log, both versions' HTML, SR before/after on the same tasks",
}


def size_category(rows: int) -> str:
    """Hugging Face's size category of a table of `rows` rows."""
    for bound, name in ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"), (1_000_000, "100K<n<1M")):
        if rows < bound:
            return name
    return "1M<n<10M" if rows < 10_000_000 else "n>10M"


def card_text(runs: list[RunSource], counts: dict[str, int], license: str | None = None) -> str:
    """The whole README.md: YAML front matter, then the body."""
    offline = any(run.offline_roles for run in runs)
    header = {
        "pretty_name": "AUI loop: " + ", ".join(run.name for run in runs),
        "license": license or "other",
        "task_categories": TASK_CATEGORIES,
        "tags": _TAGS + (["offline-providers"] if offline else []),
        "size_categories": [size_category(counts.get("steps", 0))],
        "configs": [{"config_name": table, "data_files": [{"split": "train", "path": f"{table}/*.parquet"}],
                     **({"default": True} if table == "steps" else {})} for table in TABLES],
    }
    front = yaml.safe_dump(header, sort_keys=False, allow_unicode=True, width=1000)
    body = [f"# {header['pretty_name']}", "",
            "Computer-use agents trying tasks in generated web apps, and coders revising the apps from what the agents "
            "met, exported from AUI loop run folders (the Coder–CUA design loop of AUI-Gym, *Computer-Use Agents as "
            "Judges for Generative User Interface*) by `aui export`.", "",
            "| table | rows | what |", "|---|---:|---|",
            *(f"| `{table}` | {counts.get(table, 0):,} | {_ABOUT[table]} |" for table in TABLES), "",
            "## What made the data", "", *_made_by(runs), "",
            "## Licences of the inputs", "", *_licences(runs, license), "",
            "## Loading", "", "```python", "from datasets import load_dataset", "",
            'steps = load_dataset("path/to/this/folder", "steps", split="train")   # or "tasks", "revisions"',
            'steps = load_dataset("parquet", data_files={"train": "path/to/this/folder/steps/*.parquet"}, split="train")',
            "```", "", "`screenshot` is PNG bytes: `PIL.Image.open(io.BytesIO(row[\"screenshot\"]))`.", "",
            "## Schema", "", *_schema()]
    return f"---\n{front}---\n\n" + "\n".join(body) + "\n"


def _made_by(runs: list[RunSource]) -> list[str]:
    lines = []
    for run in runs:
        config = run.manifest.get("config") or {}
        models = run.manifest.get("models") or {}
        named = ", ".join(f"`{name}` ({entry.get('provider')}: `{entry.get('model')}`)"
                          for name, entry in sorted(models.items()) if isinstance(entry, dict)) or "none"
        roles = run.offline_roles
        offline = (f"**offline providers** played these roles (no model endpoint): {', '.join(roles)}" if roles
                   else "no role was played by an offline provider")
        lines += [f"- **{run.name}**: coder(s) {_names(config.get('coders'))}; computer-use agent(s) "
                  f"{_names(config.get('cua_policies'))}" + (f" with model `{config['cua_model']}`"
                                                             if config.get("cua_model") else "")
                  + f"; revision mode(s) {_names(config.get('revision_modes'))}; rounds 0–{config.get('rounds', '?')}; "
                  f"viewport {_viewport(config)}. Models named in its manifest: {named}. {offline}. "
                  f"Chromium: {run.manifest.get('chromium') or 'not recorded'}; git commit "
                  f"`{str(run.manifest.get('git_commit') or 'not recorded')[:12]}`."]
    return lines + ["", "An offline provider is the project's own deterministic stand-in for a model (the heuristic "
                    "agent reads the page and clicks by coordinates; the offline coder applies fixed rewrites; the "
                    "offline verifier uses the apps' reference checkers): data made by them shows the loop's "
                    "mechanics, not what a model would do."]


def _names(values: object) -> str:
    return ", ".join(f"`{value}`" for value in values) if isinstance(values, list) and values else "not recorded"


def _viewport(config: dict) -> str:
    viewport = config.get("viewport") or {}
    return f"{viewport.get('width', '?')}×{viewport.get('height', '?')}" if isinstance(viewport, dict) else "?"


def _licences(runs: list[RunSource], license: str | None) -> list[str]:
    lines = []
    for run in runs:
        config = run.manifest.get("config") or {}
        app_ids = sorted({result.app_id for result in run.results.apps})
        lines.append(f"- **{run.name}** — app prompts and specs: {_source(config.get('apps'), app_ids, 'apps')}; "
                     f"first versions: " + (_source(config.get("v0_dir"), app_ids, "v0") if config.get("v0_dir")
                                            else _first_versions(config, run.offline_roles))
                     + (f"; tasks: `{Path(config['tasks_file']).name}`" if config.get("tasks_file") else "") + ".")
    stated = (f"This card states the licence `{license}` for the dataset, as its exporter chose." if license else
              "The project states no licence of its own, so the header says `license: other`: whoever publishes this "
              "dataset sets it (`aui export --license`), within the inputs' licences above.")
    return lines + ["", "Everything else (trajectories, screenshots, revised versions, checkers' proofs) was made by "
                    "the runs above. " + stated]


def _first_versions(config: dict, offline_roles: list[str]) -> str:
    coders = config.get("coders") or []
    if "coder" in offline_roles:  # every coder of the run offline (the label the manifest records)
        return "each app's reference HTML, as the offline coder gives it (the same source as the specs)"
    return f"written by the run's coder(s) ({', '.join(coders) or 'not recorded'}) from the app prompts"


def _source(where: str | None, app_ids: list[str], kind: str) -> str:
    """Where a run's apps (or first versions) came from and under which licence, as far as the folder says."""
    if not where:
        return "not recorded"
    folder = Path(where)
    record = folder / SOURCE_RECORD
    if record.is_file():
        try:
            source = json.loads(record.read_text(encoding="utf-8"))
            return (f"`{source['benchmark']}` from {source['repository']} at `{str(source['commit'])[:7]}`, licence "
                    f"{str(source['license']).split(' (')[0]} ({SOURCE_RECORD} beside the files)")
        except (OSError, ValueError, KeyError, TypeError):
            pass
    if folder.resolve() == BUNDLED_DIR.resolve() or folder.as_posix().endswith("apps_prompts/bundled"):
        return "the project's bundled apps (AUI loop's own)"
    for bench in known_benchmarks().values():
        if app_ids and set(app_ids) <= set(bench.app_ids()) and (kind == "v0") == ("html" in " ".join(bench.files)):
            return (f"`{folder.name}`, whose app ids are those of `{bench.name}` ({bench.repository} at "
                    f"`{bench.commit[:7]}`, licence {bench.license}) — inferred from the ids: no {SOURCE_RECORD} at "
                    f"`{where}` on the exporting machine")
    return f"`{where}`: not a bundled or pinned source, and no {SOURCE_RECORD} there — licence unknown"


def _schema() -> list[str]:
    lines = []
    for table in TABLES:
        lines += [f"### `{table}`", "", "| column | type | meaning |", "|---|---|---|"]
        lines += [f"| `{name}` | {kind} | {meaning.replace('|', '/')} |" for name, kind, meaning in COLUMNS[table]]
        lines.append("")
    lines.append("`change` (the items of `revisions.changes`): " + ", ".join(f"`{name}` ({kind})"
                                                                            for name, kind in CHANGE_FIELDS) + ".")
    return lines
