"""The three tables of an exported dataset (`export_dataset`): every column's name, type and meaning, in one place.

The Parquet schemas and the dataset card's schema section are both made from `COLUMNS`, so what the card says a
column holds is what the file has. Types are written as the card shows them; `arrow_schema` turns them into
pyarrow's (the only function here that needs pyarrow, which it is handed).
"""

from __future__ import annotations

from typing import Any

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
    ("tasks_compared", "int64", "Tasks with a valid checker on both versions (repeat 0): what SR before/after is over."),
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
