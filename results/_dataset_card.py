"""An exported dataset described: its three tables' columns and the dataset card (`README.md`).

`COLUMNS` holds every column's name, type and meaning in one place: the Parquet schemas (`arrow_schema`, the only
function here that needs pyarrow, which it is handed) and the card's schema section are both made from it, so what
the card says a column holds is what the file has. The card has a YAML header in Hugging Face's convention (the
configs, one per table), says what made the data — offline providers said plainly — and the inputs' licences.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from apps_prompts import BUNDLED_DIR, SOURCE_RECORD, known_benchmarks

from ._export_rows import RunSource

TABLES = ("steps", "tasks", "revisions")

_TRACK = [
    ("run", "string", "The run folder's name (`runs/<name>`)."),
    ("app_id", "string", "The app."),
    ("domain", "string", "The app's domain (paper's Table 3)."),
    ("version", "int64", "The app version: its design-loop round (0 = the first version)."),
    ("coder", "string", "The coder of the track (`offline` = the offline coder)."),
    ("cua", "string", "The computer-use agent's policy (`heuristic` = the offline heuristic agent)."),
    ("mode", "string", "The revision mode (unsupported, cua, integrated)."),
    ("commenter_mode", "string", "What the commenter saw (dashboard, text-only, screenshots-only); null: none."),
]

STEP_COLUMNS = [
    *_TRACK,
    ("variation", "string", "The look the app was served in (`default`, or a variation such as `dark`)."),
    ("repeat", "int64", "The rollout's repeat (0 = the first; each repeat has its own seed)."),
    ("task_id", "string", "The task."),
    ("level", "string", "The task's level (paper … gold); null without one."),
    ("instruction", "string", "The task text the agent was given."),
    ("episode", "string", "The rollout's folder, relative to the run folder: one episode, its rows in step order."),
    ("step", "int64", "1-based step number within the episode."),
    ("steps", "int64", "The episode's number of steps (rows)."),
    ("screenshot", "binary", "PNG the agent acted on: the screen before this step's action (step 1: the page at "
     "load; step i: the screenshot after step i − 1), byte for byte the trajectory's file."),
    ("screenshot_file", "string", "That PNG's file name in the episode's folder."),
    ("final_screenshot", "binary", "The PNG after the last step, on the episode's last row only (null elsewhere): "
     "with it every screenshot of the trajectory is in the table once."),
    ("viewport_width", "int64", "Screen width in pixels (the screenshots' width)."),
    ("viewport_height", "int64", "Screen height in pixels."),
    ("policy", "string", "The agent's policy name."),
    ("model", "string", "The agent's model; null for an offline policy."),
    ("cua_offline", "bool", "The agent was an offline provider (no model)."),
    ("action_json", "string", "The executed action, the project's JSON (`cua.Action`), in screen pixels; null "
     "when the step has none (an error before acting)."),
    ("model_action_json", "string", "The action as the model expressed it (`cua.Action` JSON, in `coordinate_space`)."),
    ("coordinate_space", "string", "The space of `model_action_json` (screen, uitars-1.5, uitars-1.0, openai-cua)."),
    ("action_uitars", "string", "The action as UI-TARS-1.5 text (`Thought: …` when the step has a thought, then "
     "`Action: …`), points in the smart-resized image's pixels (`cua.format_uitars`; its grammar has no scroll "
     "distance)."),
    ("action_computer_use", "string", "The action as an OpenAI computer-use action item, JSON in screen pixels "
     "(`cua.format_computer_action`; a scroll that named no distance carries the rollouts' default, "
     "`cua.RolloutConfig.scroll_px`); null for `finished`, which computer use says with a message."),
    ("thought", "string", "The agent's thought before acting."),
    ("raw_text", "string", "The model's reply, verbatim (an offline agent's own summary of its action)."),
    ("checker_passed", "bool", "The task's checker was true after this step."),
    ("reward", "float64", "1.0 on the first step after which the checker was true, else 0.0."),
    ("done", "bool", "The episode ended with this step (its last row, when the episode finished)."),
    ("termination", "string", "How the episode ended (success, finished, max_steps, stuck, invalid, error, "
     "timeout), on its last row; null elsewhere."),
    ("success", "bool", "The episode counts as a success in the run's SR: checker true, every further check "
     "passed, valid checker (same on every row of the episode)."),
]

TASK_COLUMNS = [
    *_TRACK,
    ("task_id", "string", "The task."),
    ("description", "string", "The task text."),
    ("expected_outcome", "string", "What the page shows when the task is done."),
    ("level", "string", "The task's level; null without one."),
    ("checker", "string", "The gated JavaScript checker rollouts ran on this version; null when none passed the gate."),
    ("checker_source", "string", "The checker as the verifier wrote it (JS or rule), accepted or not."),
    ("checker_kind", "string", "js or rule."),
    ("checker_valid", "bool", "The task counts towards Function Completeness (FC)."),
    ("proof", "string", "proven / claimed / unsupported (see `proven`)."),
    ("proven", "bool", "The checker was false at load and true after replaying the reference solution."),
    ("proof_reason", "string", "Why the proof is what it is."),
    ("reference_solution", "string", "The reference solution replayed for the proof: JSON list of steps "
     "(`apps_prompts.SolutionStep`)."),
    ("further_checks", "string", "The task's further checks (answer, judge) as JSON; `[]` without any."),
    ("verifier", "string", "Who wrote the checker (`offline` = the offline verifier)."),
    ("verifier_offline", "bool", "The verifier was an offline provider."),
    ("success", "bool", "This version's first rollout (repeat 0) of the task counts as a success."),
    ("episode", "string", "That rollout's folder (the `episode` of its rows in `steps`); null without a rollout."),
]

CHANGE_FIELDS = [
    ("id", "string"), ("kind", "string"), ("text", "string"), ("transform", "string"), ("principle", "string"),
    ("elements", "list<string>"), ("changed_elements", "list<string>"), ("applied", "bool"), ("how", "string"),
    ("counted", "bool"),
]

REVISION_COLUMNS = [
    *_TRACK[:3],
    ("coder", "string", "The coder that made the revision."),
    ("cua", "string", "The agent whose rollouts the feedback came from."),
    ("mode", "string", "The revision mode."),
    ("commenter_mode", "string", "What the commenter saw; null: none."),
    ("round_from", "int64", "The version revised."),
    ("round_to", "int64", "The version the revision made."),
    ("coder_offline", "bool", "The coder was an offline provider; null when the revision kept no record."),
    ("feedback", "string", "The feedback the coder got (`feedback-round-N.json`, verbatim JSON); null: none kept."),
    ("revision_record", "string", "The coder's own record of the revision (`revision.json`, verbatim JSON): model, "
     "transforms, the non-regression contract."),
    ("changes", "list<struct<change>>", "The change log (`results.Change`, applied or not: asked by the commenter, "
     "made by the offline coder, each checked on the DOM); null when the run has no insights.json (`aui insights "
     "RUN_DIR` makes it)."),
    ("html_before", "string", "The revised version's HTML."),
    ("html_after", "string", "The new version's HTML."),
    ("tasks_compared", "int64", "Tasks with a valid checker on both versions (repeat 0): what SR before/after is "
     "over."),
    ("sr_before", "float64", "Successes / tasks compared, on the revised version; null when none are compared."),
    ("sr_after", "float64", "The same on the new version."),
    ("tasks_gained", "list<string>", "Tasks compared that failed before and succeed after."),
    ("tasks_lost", "list<string>", "Tasks compared that succeeded before and fail after."),
]

COLUMNS: dict[str, list[tuple[str, str, str]]] = {
    "steps": STEP_COLUMNS, "tasks": TASK_COLUMNS, "revisions": REVISION_COLUMNS,
}


def arrow_schema(pa: Any, table: str) -> Any:
    """The `pyarrow.Schema` of `table` (`pa` is the pyarrow module: the caller imports it)."""
    return pa.schema([pa.field(name, _arrow_type(pa, kind)) for name, kind, _ in COLUMNS[table]])


def _arrow_type(pa: Any, kind: str) -> Any:
    simple = {"string": pa.string(), "int64": pa.int64(), "float64": pa.float64(), "bool": pa.bool_(),
              "binary": pa.binary()}
    if kind in simple:
        return simple[kind]
    if kind == "list<string>":
        return pa.list_(pa.string())
    if kind == "list<struct<change>>":
        return pa.list_(pa.struct([pa.field(name, _arrow_type(pa, sub)) for name, sub in CHANGE_FIELDS]))
    raise ValueError(f"unknown column type {kind!r}")


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
