"""The task proposer: N user tasks per app, from a model or offline (design.md §3).

The LLM proposer asks for JSON, validates it against `TASKS_JSON_SCHEMA`, sends the schema
errors back for a bounded number of repairs, drops duplicates (by normalised text), tops up
once if too few are left, and assigns its own ids — a task's id is a slug of its description,
never a list position or whatever id the model made up. Each task comes with a level (paper …
gold, by the rule of `_levels`, which the request spells out) and a one-line rationale. The
offline proposer returns the spec's tasks or the tasks of a file given by path, levels as written.

`llm` is imported lazily: loading app specs must not pull in the model SDK.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

import jsonschema
from pydantic import BaseModel, Field

from ._models import LEVELS, AppSpec, Domain, Task, TaskCategory
from ._proposer_files import load_tasks_file

if TYPE_CHECKING:
    from llm import ModelClient

PROPOSER_VERSION = "proposer-v2"  # v2: a level (paper … gold) and its rationale per task
"""Recorded with the proposals: bump it when the prompt or the post-processing changes. (The propose
stage's cache key covers this file's code itself, `flows._cache`.)"""
DEFAULT_TASK_COUNT = 30
ROLE = "proposer"

TASKS_JSON_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "Proposed user tasks for one app",
    "type": "object",
    "required": ["tasks"],
    "properties": {
        "tasks": {
            "type": "array",
            "minItems": 1,
            "items": {
                "type": "object",
                "required": ["description", "category", "expected_outcome", "level", "level_rationale"],
                "properties": {
                    "description": {"type": "string", "minLength": 8, "maxLength": 400},
                    "category": {"enum": [c.value for c in TaskCategory]},
                    "expected_outcome": {"type": "string", "minLength": 3, "maxLength": 400},
                    "level": {"enum": list(LEVELS)},
                    "level_rationale": {"type": "string", "minLength": 3, "maxLength": 200, "pattern": "^[^\\n]*$"},
                },
            },
        }
    },
}

DOMAIN_GUIDANCE: dict[Domain, str] = {
    Domain.app: "Everyday productivity: create, edit, complete and delete records; filters and sorting; "
    "validation of bad input; totals and counters that must update.",
    Domain.landing: "Marketing page: reach sections from the navigation, open plans, FAQs and menus, fill and "
    "submit sign-up or contact forms (including invalid e-mails), toggle pricing periods.",
    Domain.game: "Play: start, pause and restart; make specific moves; reach a score or a win/lose state; "
    "change difficulty or settings; the state shown after each action.",
    Domain.interactive: "Direct manipulation: set sliders, toggles and pickers to exact values; trigger "
    "visual changes that show as text or attributes; presets and resets.",
    Domain.tool: "Input to output: enter values and get a computed result; switch units or modes; copy, "
    "save or clear results; reject malformed input.",
    Domain.utility: "Small helpers: timers, converters, generators and checklists; configure options, "
    "run the helper, and read its result; limits and empty input.",
}

SYSTEM = "You design realistic test tasks for web apps. You answer with JSON only."

LEVEL_GUIDANCE = (
    "- level says how much a user must do, counting the actions of the shortest way to do it in this app: "
    "paper = 1 action, wood = 2–3, bronze = 4–6, silver = 7–10, gold = more, or waiting for the app's own timer; "
    "one level higher when the actions hide work (an exact value on a slider, a limit to find, a move that depends "
    "on what a game shows). level_rationale says why in one line, e.g. \"3 actions: type the amount, pick two units\"."
)


class ProposalResult(BaseModel):
    """The tasks of one app and how they were obtained."""

    app_id: str
    tasks: list[Task]
    proposer: str
    model: str | None = None
    offline: bool = False
    source: str = Field(description="'model', 'spec' or 'file:<path>'.")
    requested: int = 0
    duplicates_dropped: int = 0
    invalid_dropped: int = 0
    attempts: int = 0
    repairs: int = 0
    prompt_version: str = PROPOSER_VERSION


class ProposerError(RuntimeError):
    """No usable tasks; the message names the app and the model or file."""


def normalise_task_text(text: str) -> str:
    """Text for duplicate detection: lower case, punctuation and quotes gone, spaces collapsed."""
    return " ".join(re.sub(r"[^\w#%+]+", " ", text.lower()).split())


def task_id_for(description: str, taken: set[str]) -> str:
    """A stable slug id for `description`, not in `taken` (which it updates)."""
    words = re.findall(r"[a-z0-9]+", description.lower())
    base = ""
    for word in words:  # whole words up to 40 characters
        if len(base) + len(word) + 1 > 40:
            break
        base = f"{base}-{word}" if base else word
    base = base or (words[0][:40] if words else "task")
    candidate, number = base, 2
    while candidate in taken:
        candidate, number = f"{base}-{number}", number + 1
    taken.add(candidate)
    return candidate


class OfflineTaskProposer:
    """The spec's own tasks, or those of a tasks file (YAML/JSON) given by path."""

    def __init__(self, name: str = "offline", *, tasks_file: str | Path | None = None) -> None:
        self.name = name
        self.tasks_file = Path(tasks_file) if tasks_file is not None else None

    async def propose(self, app: AppSpec, n: int = DEFAULT_TASK_COUNT) -> ProposalResult:
        """All tasks of the spec or file (n is a cap, not a target: we never invent tasks offline).

        Raises:
            ProposerError: the app has no tasks (and no file was given).
            TasksFileError: the file is unusable (names the file and the entry or id).
        """
        if self.tasks_file is not None:
            tasks, source = load_tasks_file(self.tasks_file, app.id), f"file:{self.tasks_file}"
        else:
            tasks, source = list(app.tasks), "spec"
        if not tasks:
            where = f"tasks file {self.tasks_file}" if self.tasks_file else f"spec {app.source or app.id}"
            raise ProposerError(f"offline proposer: no tasks for app '{app.id}' in {where}; "
                                "give a tasks file (--tasks FILE) or use a model proposer")
        return ProposalResult(app_id=app.id, tasks=tasks[:n], proposer=self.name, offline=True, source=source,
                              requested=n)


class LLMTaskProposer:
    """Tasks from a chat model, validated, de-duplicated and given our ids."""

    def __init__(self, client: ModelClient, model: str = ROLE, *, max_repairs: int = 2, top_up_rounds: int = 1) -> None:
        """Raises UnknownModelError when `model` is neither a model nor a role of the client's registry."""
        from llm import RoleClient  # lazily: see the module docstring

        self.name = model
        self._client = RoleClient(client, model, role=ROLE)  # the proposer's usage row, whichever model plays it
        self.model = self._client.model
        self.max_repairs = max(0, max_repairs)
        self.top_up_rounds = max(0, top_up_rounds)

    async def propose(self, app: AppSpec, n: int = DEFAULT_TASK_COUNT) -> ProposalResult:
        """Up to `n` tasks for `app`; ProposerError when no usable tasks could be obtained."""
        result = ProposalResult(app_id=app.id, tasks=[], proposer=self.name, model=self.model, source="model", requested=n)
        kept: list[dict[str, Any]] = []
        seen: set[str] = set()
        for round_number in range(self.top_up_rounds + 1):
            wanted = n - len(kept)
            if wanted <= 0:
                break
            items = await self._ask(_request_text(app, wanted, [k["description"] for k in kept], round_number), result)
            for item in items:
                key = normalise_task_text(item["description"])
                if key in seen:
                    result.duplicates_dropped += 1
                    continue
                seen.add(key)
                kept.append(item)
        if not kept:
            raise ProposerError(f"proposer model {self.model!r} gave no usable tasks for app '{app.id}'")
        taken: set[str] = set()
        result.tasks = [
            Task(id=task_id_for(item["description"], taken), description=item["description"].strip(),
                 category=item["category"], expected_outcome=item["expected_outcome"].strip(), level=item["level"],
                 level_rationale=item["level_rationale"].strip())
            for item in kept[:n]
        ]
        return result

    async def _ask(self, text: str, result: ProposalResult) -> list[dict[str, Any]]:
        """Valid task items from one request, with up to `max_repairs` repair turns."""
        from llm import Repair, ask_json, system_message, user_message  # lazily: see the module docstring

        answer = await ask_json(self._client, [system_message(SYSTEM), user_message(text)], parse=_valid_tasks,
                                repair=Repair(_repair_text), attempts=self.max_repairs + 1)
        result.attempts += len(answer.attempts)
        result.repairs += len(answer.attempts) - 1
        if answer.ok:
            return answer.value
        # Out of repairs: keep the items that are valid on their own, if any.
        refused = answer.attempts[-1].error
        item_schema = jsonschema.Draft202012Validator(TASKS_JSON_SCHEMA["properties"]["tasks"]["items"])
        items = [item for item in refused.items if isinstance(item, dict) and item_schema.is_valid(item)]
        result.invalid_dropped += len(refused.items) - len(items)
        if not items:
            raise ProposerError(
                f"proposer model {self.model!r} gave no valid task JSON for app '{result.app_id}' after "
                f"{self.max_repairs} repair(s): {'; '.join(refused.problems[:3])}"
            )
        return items


def _request_text(app: AppSpec, count: int, existing: list[str], round_number: int) -> str:
    parts = [
        f"Propose {count} distinct tasks that a real user would try on this {app.domain.value} web app.",
        f"The app:\n{app.prompt_text().strip()}",
        f"What tasks in this domain usually cover: {DOMAIN_GUIDANCE[app.domain]}",
        "Rules for each task:\n"
        "- It is done entirely inside the app in a browser (no files, network, other sites or devices).\n"
        "- It names concrete values (\"set the price to 450000\", \"add 'Buy milk'\"), not vague goals.\n"
        "- Its success shows in the final page (text, values, visible elements), so a script can check it.\n"
        "- Mix categories: about half core_function (one feature), a third user_workflow (several steps), "
        "the rest edge_case (invalid or boundary input the app should handle).\n"
        "- expected_outcome says what the page shows when it is done.\n" + LEVEL_GUIDANCE,
    ]
    if existing:
        parts.append("Do not repeat these tasks:\n" + "\n".join(f"- {d}" for d in existing))
    parts.append(
        "Answer with one JSON object and nothing else, of this form:\n"
        '{"tasks": [{"description": "...", "category": "core_function", "expected_outcome": "...", "level": "wood", '
        '"level_rationale": "2 actions: type the name, press Add"}]}'
    )
    if round_number:
        parts.append(f"(Top-up request {round_number}.)")
    return "\n\n".join(parts)


class TasksReplyError(ValueError):
    """A reply that is not the tasks' form: `problems` says what is wrong (the repair quotes them), `items` are
    the task items it holds, if any."""

    def __init__(self, problems: list[str], items: Any = None) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems
        self.items: list[Any] = items if isinstance(items, list) else []


def _repair_text(error: TasksReplyError) -> str:
    listed = "\n".join(f"- {e}" for e in error.problems[:8])
    return (f"That JSON does not match the required form:\n{listed}\n"
            'Send the corrected JSON object only: {"tasks": [{"description", "category", "expected_outcome", "level", '
            f'"level_rationale"}}]}}, category one of {", ".join(c.value for c in TaskCategory)}, level one of {", ".join(LEVELS)}, '
            "level_rationale one line.")


def _valid_tasks(text: str) -> list[dict[str, Any]]:
    """The task items of a reply that matches `TASKS_JSON_SCHEMA`: its JSON object, or its bare list of tasks (an
    easy, unambiguous fix), read by `llm.parse_json_reply`. Raises TasksReplyError listing what is wrong, root first
    ("no JSON object in the reply" for no JSON at all)."""
    from llm import JsonReplyError, parse_json_reply  # here, not at the top: see the module docstring

    try:
        # NaN is read as a number, as this reading always has: the schema then names the field it breaks
        data = parse_json_reply(text, allow_nan=True, allow_array=True)
    except JsonReplyError:
        raise TasksReplyError(["no JSON object in the reply"]) from None
    if isinstance(data, list):
        data = {"tasks": data}
    validator = jsonschema.Draft202012Validator(TASKS_JSON_SCHEMA)
    errors = [f"{'/'.join(map(str, e.absolute_path)) or '<root>'}: {e.message}"
              for e in sorted(validator.iter_errors(data), key=lambda e: list(map(str, e.absolute_path)))]
    if errors:
        raise TasksReplyError(errors, data.get("tasks") if isinstance(data, dict) else None)
    return data["tasks"]


OFFLINE_PROPOSERS = ("offline",)
"""The proposers that call no model, by name (any other name is a model role or name of the registry)."""


def get_proposer(
    name: str, client: ModelClient | None = None, *, tasks_file: str | Path | None = None, **options: Any
) -> OfflineTaskProposer | LLMTaskProposer:
    """`"offline"` (spec tasks), or a model name / role of the model registry.

    A tasks file always wins: with `tasks_file` the tasks come from the file whatever `name`
    says, so a run given tasks never spends model calls on proposing others. A model the
    registry marks offline also gets the offline proposer.

    Raises:
        UnknownModelError: `name` is neither "offline" nor a model or role of the registry.
    """
    if name in OFFLINE_PROPOSERS or tasks_file is not None:
        return OfflineTaskProposer(name, tasks_file=tasks_file)
    if client is None:
        from llm import get_client  # lazily: see the module docstring

        client = get_client()
    if client.registry.is_offline(name):
        return OfflineTaskProposer(name)
    return LLMTaskProposer(client, name, **options)


async def propose_tasks(
    app: AppSpec,
    *,
    proposer: str = "offline",
    client: ModelClient | None = None,
    n: int = DEFAULT_TASK_COUNT,
    tasks_file: str | Path | None = None,
) -> list[Task]:
    """The tasks of `app` (see `get_proposer`); use `get_proposer(...).propose()` for the full record.
    Raises ProposerError, TasksFileError, UnknownModelError as `get_proposer` and `propose` do."""
    return (await get_proposer(proposer, client, tasks_file=tasks_file).propose(app, n)).tasks
