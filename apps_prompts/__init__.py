"""App specs and tasks: models, loaders (ours and AUI-Gym's), the bundled sample apps, the task proposer.

    specs = load_apps(BUNDLED_DIR).raise_for_errors()       # or an AUI-Gym folder of id/title/prompt/tags YAML
    tasks = await propose_tasks(spec, proposer="offline")   # the spec's tasks; a model name proposes N new ones
    level_from_solution(task)                               # the level rule: the solution's steps (+1 for an answer)
    fetch_benchmark("aui-gym")                              # a pinned public benchmark → data/aui-gym, every sha256 checked
"""

from ._benchmarks import (
    BASE_URL_VARIABLE,
    DEFAULT_BASE_URL,
    Benchmark,
    ChecksumMismatchError,
    FetchError,
    MissingSourceFileError,
    SourceUnreachableError,
    UnknownBenchmarkError,
    get_benchmark,
    known_benchmarks,
)
from ._fetch import SOURCE_RECORD, FetchReport, default_destination, fetch_benchmark, replace_folder
from ._levels import level_above, level_from_solution, solution_steps
from ._loader import (
    BUNDLED_DIR,
    AppLoadError,
    AppSpecError,
    LoadResult,
    app_ids_hint,
    load_app,
    load_apps,
    reference_html_path,
)
from ._models import (
    LEGACY_LEVELS,
    LEVELS,
    AnswerCheck,
    AnswerMatch,
    AppPrompt,
    AppSpec,
    Check,
    DomCheck,
    Domain,
    JudgeCheck,
    Level,
    SolutionStep,
    Task,
    TaskCategory,
)
from ._proposer import OFFLINE_PROPOSERS, ProposerError, get_proposer, propose_tasks
from ._proposer_files import TasksFileError, load_tasks_file, tasks_file_app_ids
from ._schema import app_spec_json_schema

__all__ = [
    "BASE_URL_VARIABLE",
    "BUNDLED_DIR",
    "DEFAULT_BASE_URL",
    "SOURCE_RECORD",
    "Benchmark",
    "ChecksumMismatchError",
    "FetchError",
    "FetchReport",
    "MissingSourceFileError",
    "SourceUnreachableError",
    "UnknownBenchmarkError",
    "default_destination",
    "fetch_benchmark",
    "replace_folder",
    "get_benchmark",
    "known_benchmarks",
    "tasks_file_app_ids",
    "LEGACY_LEVELS",
    "LEVELS",
    "OFFLINE_PROPOSERS",
    "AnswerCheck",
    "AnswerMatch",
    "Check",
    "DomCheck",
    "JudgeCheck",
    "Level",
    "AppLoadError",
    "AppPrompt",
    "AppSpec",
    "AppSpecError",
    "Domain",
    "LoadResult",
    "ProposerError",
    "SolutionStep",
    "Task",
    "TaskCategory",
    "TasksFileError",
    "app_ids_hint",
    "app_spec_json_schema",
    "get_proposer",
    "level_above",
    "level_from_solution",
    "load_app",
    "load_apps",
    "load_tasks_file",
    "propose_tasks",
    "reference_html_path",
    "solution_steps",
]
