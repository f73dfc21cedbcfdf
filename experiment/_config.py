"""The experiment config: what to sweep over and how (one YAML file or CLI flags).

The config's command line: every field a user sets declares its group (and its flag, if not named after it) once,
on the field (`Flag`); `aui run` and `aui sweep` are made from `config_flags`, and `command_config` makes the run's
config of what they were given."""

from __future__ import annotations

import types
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

import yaml
from pydantic import AliasChoices, BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, ValidationInfo, field_validator
from pydantic import model_validator

from apps_prompts import BUNDLED_DIR, Level, Task, app_ids_hint
from coder import RevisionMode
from cua import DEFAULT_VIEWPORT, Viewport
from llm import PicklesKeywordFields, RunBudget
from perturb import DEFAULT, needed_roles, resolve

from ._offline_roles import OFFLINE_PLAYERS, ROLE_FIELDS, is_offline_provider, registry_at

CommenterMode = Literal["dashboard", "text-only", "screenshots-only"]
Carry = Literal["latest", "best"]
FeedbackSource = Literal["commenter", "defects"]
TraceMode = Literal["off", "failures", "all"]
GROUPS = ("apps", "roles", "loop", "browser", "budget", "output")
"""The groups `aui run --help` shows the config's flags in, in this order."""


@dataclass(frozen=True)
class Flag:
    """Marks a field a user sets on the command line (`aui run` / `aui sweep`: read by `config_flags`): its group in
    their `--help`, and its flag when not `--<field-name>`; a nested model's fields get flags of their own names.
    Group None: set in a config file only (a mapping)."""

    group: str | None
    flag: str | None = None
    nested: bool = False


T = TypeVar("T")
Apps, Role, Loop, Browser, Budget, Output = (Annotated[T, Flag(group)] for group in GROUPS)
FileOnly = Annotated[T, Flag(None)]


class ConfigError(PicklesKeywordFields, ValueError):
    """A config file or flag is wrong; the message names the file and field.

    `field`, where one is at fault, is said first (`field 'coders': …`) and kept, so that the pre-flight can blame
    the flag that set it."""

    def __init__(self, problem: str, *, field: str | None = None) -> None:
        super().__init__(problem)
        self.field = field

    def __str__(self) -> str:
        return f"field '{self.field}': {self.args[0]}" if self.field else str(self.args[0])


UNLEVELLED_MAX_STEPS = 20
"""The step budget of a task without a level (the paper's 20)."""


class LevelSetting(BaseModel):
    """One level's weight in the weighted score and its rollouts' step budget."""

    model_config = ConfigDict(extra="forbid")

    weight: float = Field(gt=0, le=1000)
    max_steps: int = Field(ge=1, le=200)


# Rollouts in flight when a CUA calls a model: each waits seconds on the model per step, so the browser and cores
# idle unless several are in flight; bounded so one run does not hold dozens of pages open.
MODEL_BOUND_SLOTS = 8

DEFAULT_LEVELS: dict[Level, LevelSetting] = {
    # OSUniverse's weights; step budgets for single-page web apps (OSUniverse: 5 / 25 / 50 / 75 / 100 on desktops).
    Level.paper: LevelSetting(weight=0.5, max_steps=5),
    Level.wood: LevelSetting(weight=1, max_steps=10),
    Level.bronze: LevelSetting(weight=2, max_steps=15),
    Level.silver: LevelSetting(weight=4, max_steps=20),
    Level.gold: LevelSetting(weight=8, max_steps=30),
}


class ExperimentConfig(BaseModel):
    """One experiment: apps × coders × CUA policies × revision modes, for some rounds. A field marked with a `Flag`
    (`Loop[int]`, …) is set by its flag too, and its description is the flag's help."""

    model_config = ConfigDict(extra="forbid")
    _flags: dict[str, str] = PrivateAttr(default_factory=dict)
    """Field → the command-line flag that set it (`make_config`'s `flags`): the checks blame a bad value on it."""

    name: Output[str] = Field(default="offline-bundled", pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$", description="Run name; the run folder is out_dir/name.")
    apps: Apps[Path] = Field(default=BUNDLED_DIR, description="A folder (or file) of app specs: ours or AUI-Gym YAML.")
    app_ids: Annotated[list[str], Flag("apps", "--app")] = Field(default_factory=list, description="Only these apps (default: all).")
    v0_dir: Apps[Path | None] = Field(default=None, description="Existing apps as ID/index.html, used as the initial version by the offline coder.")
    tasks_file: Apps[Path | None] = Field(default=None, description="Tasks for every app (YAML/JSON: {app_id: [Task, ...]}) instead of the specs' own.")
    coders: Annotated[list[str], Flag("roles", "--coder")] = Field(default_factory=lambda: ["offline"], min_length=1, description="Coder model names (or 'offline').")
    cua_policies: Annotated[list[str], Flag("roles", "--cua")] = Field(default_factory=lambda: ["heuristic"], min_length=1, description="CUA policy names: heuristic, uitars, openai-cua.")
    cua_model: Role[str | None] = Field(default=None, description="Model for model-backed CUA policies (default: the policy's own: "
                                  "the 'cua' role for uitars, the 'openai-cua' entry for openai-cua).")
    verifier: Role[str] = Field(default="offline", description="Verifier model name or 'offline' (reference checkers).")
    proposer: Role[str] = Field(default="offline", description="Task proposer model name or 'offline' (the specs' tasks).")
    commenter: Role[str] = Field(default="offline", description="Commenter model name or 'offline' (measured DOM facts).")
    commenter_modes: Annotated[list[CommenterMode], Flag("loop", "--commenter-mode")] = Field(
        default_factory=lambda: ["dashboard"], min_length=1,
        description="What the commenter sees (a sweep axis, the paper's Table 5): the dashboard, the step history as "
        "text, or the raw step screenshots. Tracks of the `unsupported` revision mode do not comment.")
    revision_modes: Annotated[list[RevisionMode], Flag("loop", "--mode")] = Field(default_factory=lambda: ["integrated"], min_length=1, description=(
        "What drives each revision: unsupported (the verifier's reasons), cua (the commenter's feedback) or integrated (both)."))
    rounds: Loop[int] = Field(default=2, ge=0, le=20, description="Revisions after the initial version (round 0).")
    carry: Loop[Carry] = Field(default="latest", description="Which version round k+1 revises: the latest (the paper's) or the "
                         "best so far (by SR over all tasks; ties go to the later round).")
    tasks_per_app: Apps[int] = Field(default=30, ge=1, le=1000, description="Tasks the LLM proposer writes per app.")
    max_tasks_per_app: Apps[int] = Field(default=100, ge=1, description="The most tasks one app may have (a tasks file, a spec "
                                   "or the proposer's count): more is refused before the run starts.")
    max_rollouts: Budget[int] = Field(default=5_000, ge=1, description="The largest run (rollouts, at most) that starts without "
                              "`--yes`; preflight prints the size of every run.")
    max_steps: Loop[int | None] = Field(default=None, ge=1, le=200, description=(
        "One step budget for every rollout, overriding the levels' (None: each task's level's `max_steps`, and "
        f"{UNLEVELLED_MAX_STEPS} — the paper's — for a task without a level)."))
    levels: FileOnly[dict[Level, LevelSetting]] = Field(default_factory=lambda: dict(DEFAULT_LEVELS), description=(
        "Weight and step budget per task level (OSUniverse's scoring: the weighted score is Σ w·passed / Σ w·n). "
        "Levels left out keep their defaults."))
    repeats: Loop[int] = Field(default=1, ge=1, le=50, description=(
        "Rollouts per task and app version, each with its own seed (the app's Math.random, and the model's sampling "
        "seed where the provider takes one): SR's spread across repeats and each task's k of N."))
    fixed_clock: Browser[bool] = Field(default=False, description=(
        "Start every rollout's clock at the same instant (cua.FIXED_CLOCK_START; it then runs), so apps showing "
        "today's date look the same across agents, repeats and days."))
    judge: Role[str] = Field(default="offline", description=(
        "Who judges tasks' final_screenshot / flow checks: a model name or role (e.g. 'judge'), or 'offline' (the text "
        "judge; it cannot judge a flow)."))
    cua_options: FileOnly[dict[str, dict[str, str | int | float | bool]]] = Field(
        default_factory=dict, description="Options per CUA policy, e.g. {uitars: {prompt: compact, history_images: 3}}.")
    reuse_stale: Output[bool] = Field(default=False, description=(
        "Reuse the run folder's cached stage results even where the code (or Chromium) that made them has changed "
        "since: for someone who knows the change does not matter. Printed and recorded in the manifest."))
    insights: Output[bool] = Field(default=False, description=(
        "After the sweep, its design insights (`aui insights`): the change log, the tasks that flipped and the changes "
        "that touched them, the principle table — in insights.json, the report and a Prefect table artifact. Each "
        "revision's two versions are loaded in Chromium once more."))
    trace: Browser[TraceMode] = Field(default="off", description="Playwright traces of rollouts: none, failed rollouts only, or all "
                             "(open one with `playwright show-trace PATH`).")
    viewport: Browser[Viewport] = Field(default=DEFAULT_VIEWPORT, description="Browser viewport, e.g. 1280x720: the screenshots, "
                               "the agents' coordinate spaces, the dashboards, the commenters and the coder's prompts "
                               "and offline rewrites follow it.")
    style_block: Loop[bool | None] = Field(
        default=None, description="The agent-centric style block (de-stylisation) in revision prompts; None: the paper's "
        "setting, on for the cua and integrated modes and off for unsupported.")
    variations: Loop[list[str]] = Field(default_factory=lambda: ["default"], min_length=1, description=(
        "How every round's version is shown to the agent (OpenApps' axis): `default` (the app as it is) and any of "
        "dark, black-white, hard-font, zoom-125, zoom-80, long, misleading, adversarial, popup, german, composed "
        "with '+' (e.g. dark+long), several separated by commas. The default look is always evaluated; each other "
        "variant is proven first (the tasks it breaks are excluded for it) and seeded with `seed`."))
    revise_on: Loop[str] = Field(default="default", description="The variation whose failed rollouts the commenter sees "
                           "(the loop revises on the default look unless told otherwise).")
    translator: Role[str] = Field(default="offline", description="Model name or role that translates apps for the `german` "
                            "variation ('offline' cannot translate: such a run is refused).")
    feedback: Loop[list[FeedbackSource]] = Field(default_factory=lambda: ["commenter"], min_length=1, description=(
        "What the coder is told about failed rollouts: the commenter's feedback and/or the GUI defects a detector "
        "finds in their transition tuples (`defects`). `+defects` (as in `--feedback +defects`) adds them to the "
        "commenter's; `commenter+defects` says both."))
    detector: Role[str] = Field(default="offline", description="Who finds the defects of `feedback: [defects]`: 'offline' "
                          "(rules on measured facts) or a model name or role (e.g. 'detector').")
    concurrency: Browser[int | None] = Field(default=None, ge=1, le=32, description=(
        "Rollouts in flight at once (browser contexts). None: what limits the run decides (`rollout_slots`) — the "
        "cores (at least 2) when every CUA policy is offline (CPU-bound: more in flight only queue for the cores), "
        f"{MODEL_BOUND_SLOTS} when one calls a model (bound by its latency; the model's max_concurrency still caps "
        "its calls)."))
    models_config: Annotated[Path | None, Flag("roles", "--models")] = Field(default=None, description="Model registry YAML (default configs/models.yaml).")
    out_dir: Annotated[Path, Flag("output", "--out")] = Field(default=Path("runs"), description="Runs folder: the run goes to out_dir/name.")
    viewer_url: Output[str] = Field(default="http://127.0.0.1:8765", validation_alias=AliasChoices("viewer_url", "serve_url"),
                            description="Where `aui view` serves the runs: Prefect artifacts link to its pages "
                            "(`serve_url`, its old name, is still read).")
    seed: Loop[int] = Field(
        default=0,
        description="The run's base seed, recorded in the manifest: repeat r of a task's rollout seeds the app's "
        "Math.random with seed + r (and adds it to a model's `params.seed` where the registry gives one, sent only to "
        "servers that accept one); content variations draw with it.",
    )
    budget: Annotated[RunBudget, Flag("budget", nested=True)] = Field(default_factory=RunBudget, description=(
        "Limits on model calls and dollars, for the run (max_model_calls, max_cost_usd) and per role (roles: {cua: "
        "{max_model_calls: 5000}}); kept across re-runs in budget.json (flows._budget)."))
    task_runner: Loop[Literal["default", "dask"]] = Field(default="default", description="Where stages run: this process, or a Dask cluster (prefect-dask).")
    dask_address: Loop[str | None] = Field(default=None, description="Scheduler of the Dask cluster, e.g. tcp://10.0.0.5:8786 (with task_runner: dask).")

    @model_validator(mode="before")
    @classmethod
    def _one_commenter_mode(cls, data: object) -> object:
        """`commenter_mode: X` (one mode, the older spelling) is `commenter_modes: [X]`."""
        if isinstance(data, dict) and "commenter_mode" in data:
            data = dict(data)
            single = data.pop("commenter_mode")
            if "commenter_modes" in data:
                raise ValueError("give commenter_modes (a list) or commenter_mode, not both")
            data["commenter_modes"] = [single]
        return data

    @field_validator("feedback", mode="before")
    @classmethod
    def _feedback_spelling(cls, value: object) -> object:
        """`+defects` is the commenter's feedback plus the defects; `a+b` (or a list) names each source."""
        items = [value] if isinstance(value, str) else value
        if isinstance(items, list) and all(isinstance(item, str) for item in items):
            parts = [part.strip() for item in items for part in item.split("+")]
            value = list(dict.fromkeys("commenter" if part == "" else part for part in parts))  # each once, in order
        return value

    @field_validator("variations", mode="before")
    @classmethod
    def _comma_separated(cls, value: object) -> object:
        """`default,dark` (a flag's spelling, or a file's string) names two variations."""
        items = [value] if isinstance(value, str) else value
        if isinstance(items, list) and all(isinstance(item, str) for item in items):
            return [part.strip() for item in items for part in item.split(",") if part.strip()]
        return value

    @field_validator("trace", mode="before")
    @classmethod
    def _yaml_off(cls, value: object) -> object:
        """YAML reads a bare `off` as false (and `on` as true)."""
        return {False: "off", True: "all"}.get(value, value) if isinstance(value, bool) else value

    @field_validator("apps", "v0_dir", "tasks_file", "models_config")
    @classmethod
    def _exists(cls, path: Path | None, info: ValidationInfo) -> Path | None:
        if path is not None and not Path(path).exists():
            raise ValueError(f"path does not exist: {path}{app_ids_hint(path) if info.field_name == 'apps' else ''}")
        return path

    @field_validator("variations", mode="after")
    @classmethod
    def _known_variations(cls, names: list[str]) -> list[str]:
        """Each name resolves (parts known, each once); `default` first and always there, no name twice."""
        for name in names:
            resolve(name)  # VariationError (a ValueError) names the part and lists the known ones
        return [DEFAULT, *dict.fromkeys(name.strip() for name in names if name.strip() != DEFAULT)]

    @model_validator(mode="after")
    def _variations_have_what_they_need(self) -> ExperimentConfig:
        if self.revise_on not in self.variations:
            raise ValueError(f"revise_on {self.revise_on!r} is not one of the run's variations ({', '.join(self.variations)})")
        registry = registry_at(self.models_config) if any("translator" in needed_roles(name) for name in self.variations) else None
        for name in self.variations:
            if "translator" in needed_roles(name) and is_offline_provider("translator", self.translator, registry):
                raise ValueError(f"variation {name!r} translates the app's text and needs a model (`translator:`, e.g. "
                                 "the 'translator' role of configs/models.yaml); an offline run cannot translate")
        return self

    @model_validator(mode="after")
    def _dask_needs_an_address(self) -> ExperimentConfig:
        if self.task_runner == "dask" and not self.dask_address:
            raise ValueError("task_runner 'dask' needs dask_address (the scheduler, e.g. tcp://127.0.0.1:8786)")
        return self

    @field_validator("levels", mode="after")
    @classmethod
    def _every_level(cls, levels: dict[Level, LevelSetting]) -> dict[Level, LevelSetting]:
        """Levels a config leaves out keep their defaults."""
        return {**DEFAULT_LEVELS, **levels}

    @property
    def run_dir(self) -> Path:
        return Path(self.out_dir) / self.name

    def step_budget(self, task: Task) -> int:
        """The rollout's `max_steps` for `task`: the run's override, else its level's budget (20 without a level)."""
        if self.max_steps is not None:
            return self.max_steps
        return self.levels[task.level].max_steps if task.level is not None else UNLEVELLED_MAX_STEPS

    @property
    def weights(self) -> dict[str, float]:
        """Level name → weight in the weighted score."""
        return {level.value: setting.weight for level, setting in self.levels.items()}

    @property
    def most_steps(self) -> int:
        """The largest step budget any rollout of the run may get (for the run's size)."""
        return self.max_steps if self.max_steps is not None else max(UNLEVELLED_MAX_STEPS,
                                                                     *(s.max_steps for s in self.levels.values()))


def load_config(path: Path) -> ExperimentConfig:
    """Read and validate a YAML config.

    Raises:
        ConfigError: the file is missing, not YAML, or a field is wrong (named with the file).
    """
    return make_config(read_config_file(path), source=str(path))


def read_config_file(path: Path) -> dict:
    """A config file's settings, its relative paths made relative to the file's folder (not validated)."""
    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except FileNotFoundError:
        raise ConfigError(f"config file not found: {path}") from None
    except IsADirectoryError:
        raise ConfigError(f"{path}: a folder, not a config file") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: not valid YAML: {str(exc).splitlines()[0]}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a mapping of settings")
    for key in ("apps", "v0_dir", "tasks_file", "models_config", "out_dir"):
        if isinstance(data.get(key), str) and not Path(data[key]).is_absolute():
            data[key] = str((path.parent / data[key]).resolve())
    return data


def make_config(data: dict, source: str = "flags", flags: dict[str, str] | None = None) -> ExperimentConfig:
    """Validate `data` as an `ExperimentConfig`. `flags` maps a field (`viewport`, `budget.max_cost_usd`) to the
    command-line flag that set it: a bad value there is blamed on the flag the user typed, not on a field
    name they never wrote (nor on the config file, when a flag overrode it)."""
    try:
        config = ExperimentConfig.model_validate(data)
    except ValidationError as exc:
        blamed = [(err, _flag_of(err["loc"], flags or {})) for err in exc.errors()]
        problems = list(dict.fromkeys(_problem(err, source, flag) for err, flag in blamed))  # both sides of --viewport: one line
        by_flag = all(flag for _, flag in blamed)
        raise ConfigError("; ".join(problems) if by_flag else f"{source}: " + "; ".join(problems)) from None
    config._flags = dict(flags or {})
    return config


def _flag_of(loc: tuple, flags: dict[str, str]) -> str | None:
    """The flag that set the field at `loc` (a nested field's own, else its model's), if a flag did."""
    return next((flags[key] for key in (".".join(map(str, loc[:2])), str(loc[0]) if loc else "") if key in flags), None)


def _problem(err: dict, source: str, flag: str | None) -> str:
    # pydantic prefixes a validator's own message with "Value error, "; the message says it all
    message = err["msg"].removeprefix("Value error, ")
    if not err["loc"]:
        return message
    if flag is not None:
        given = err.get("input")
        shown = f" (got {given!r})" if isinstance(given, (str, int, float)) and repr(given) not in message else ""
        return f"{flag}: {message}{shown}"
    return f"field '{'.'.join(str(p) for p in err['loc'])}': {message}"


@dataclass(frozen=True)
class ConfigFlag:
    """One flag of `aui run` / `aui sweep`: the field it sets (a nested one dotted: `budget.max_cost_usd`), its group
    in `--help`, its help (the field's description) and its type: str, int, float, bool, Path or list (repeatable)."""

    field: str
    flag: str
    group: str
    help: str
    type: type


def config_flags() -> list[ConfigFlag]:
    """Every flag the config declares (each field marked with a `Flag`), in the order of its fields."""
    found = []
    for name, info in ExperimentConfig.model_fields.items():
        mark = next(item for item in info.metadata if isinstance(item, Flag))  # every field says whether it has one
        if mark.nested:  # a nested model's fields (the budget's limits), each flagged by its own name
            found += [ConfigFlag(f"{name}.{field}", _dashed(field), mark.group, f"The run's {name}: "
                                 f"{inner.description[:1].lower()}{inner.description[1:]}", _cli_type(inner.annotation))
                      for field, inner in _cli_type(info.annotation, bare=True).model_fields.items()
                      if _cli_type(inner.annotation) is not dict]
        elif mark.group is not None:
            found.append(ConfigFlag(name, mark.flag or _dashed(name), mark.group,
                                    _with_choices(info.description or "", info.annotation), _cli_type(info.annotation)))
    return found


def _with_choices(text: str, annotation: Any) -> str:
    """`text`, ending with the names a field of fixed choices (a Literal, or a list of one) takes: `(off | all)`."""
    annotation = _cli_type(annotation, bare=True)
    if typing.get_origin(annotation) is list:
        annotation = typing.get_args(annotation)[0]
    if typing.get_origin(annotation) is not typing.Literal:
        return text
    return f"{text} ({' | '.join(map(str, typing.get_args(annotation)))})"


def _dashed(field: str) -> str:
    return "--" + field.replace("_", "-")


def _cli_type(annotation: Any, bare: bool = False) -> Any:
    """What a flag of a field so annotated takes (`bare`: the annotation without its `| None`)."""
    if isinstance(annotation, types.UnionType) or typing.get_origin(annotation) is typing.Union:
        annotation = next(arg for arg in typing.get_args(annotation) if arg is not type(None))
    if bare or annotation in (bool, int, float, Path):
        return annotation
    return typing.get_origin(annotation) if typing.get_origin(annotation) in (list, dict) else str


def command_config(given: dict[str, Any], config_file: Path | None = None, offline: bool = False) -> ExperimentConfig:
    """The run's config: `config_file`'s settings (or the defaults), with the flags `given` (field → value, as
    `config_flags` names the fields) over them; `offline` plays every role with its own offline provider.

    Raises:
        ConfigError: a bad file or value (a value given by a flag is named by its flag), or `offline` together with
            a flag naming a role's model (both named).
    """
    data = read_config_file(config_file) if config_file is not None else {}
    flags = {spec.field: spec.flag for spec in config_flags() if spec.field in given}
    for field, value in given.items():
        head, _, sub = field.partition(".")
        data[head] = {**(data.get(head) or {}), sub: value} if sub else value
    if offline:
        _refuse_models(given, flags, registry_at(data.get("models_config")))
        for role, name in OFFLINE_PLAYERS.items():
            if ROLE_FIELDS[role] not in given:
                data[ROLE_FIELDS[role]] = [name] if role in ("coder", "cua") else name
    return make_config(data, source=str(config_file) if config_file is not None else "flags", flags=flags)


def _refuse_models(given: dict[str, Any], flags: dict[str, str], registry) -> None:
    """`--offline` with a flag naming a model for a role (`--cua-model` too) is a contradiction: refused, naming both."""
    for role, field in [*ROLE_FIELDS.items(), ("cua", "cua_model")]:
        names = given.get(field) or []
        for name in [names] if isinstance(names, str) else names:
            if not is_offline_provider(role, name, registry):
                raise ConfigError(f"--offline and {flags[field]} {name}: --offline plays every role with its offline "
                                  f"provider, and {name!r} is not the {role}'s; give one or the other")
