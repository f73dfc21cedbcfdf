"""`aui apps …`: list, import and validate app specs; fetch the public benchmarks by name."""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from pathlib import Path

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from apps_prompts import (
    BASE_URL_VARIABLE,
    DEFAULT_BASE_URL,
    Domain,
    FetchError,
    FetchReport,
    LoadResult,
    TasksFileError,
    fetch_benchmark,
    known_benchmarks,
    load_apps,
    load_tasks_file,
    reference_html_path,
    tasks_file_app_ids,
)
from verifier import TaskProof, prove_task

from ._options import APP_IDS, SPEC_PATH, comma_list
from ._output import _fail, err_console, exit_on, in_browser

apps_app = typer.Typer(help="App specs: list, import (AUI-Gym format), validate; fetch the public benchmarks.", no_args_is_help=True)
console = Console()


def _load_or_exit(path: Path) -> LoadResult:
    """The specs under `path`; one `error:` line per file that did not load (exit 2: nothing to load at all)."""
    with exit_on(FileNotFoundError):
        result = load_apps(path)
    if not result.apps and not result.errors:  # not "0 apps", which reads as a folder of apps that came out empty
        raise _fail(f"no app found in {path}: it holds no app spec (.yaml/.yml) file")
    for bad_file, problems in result.bad_files().items():
        _fail(f"{bad_file}: {problems}")
    if not result.apps and result.errors:
        err_console.print(f"0 apps: none of the {len(result.bad_files())} spec file(s) in {escape(str(path))} could be loaded",
                          soft_wrap=True)
        raise typer.Exit(1)
    return result


@apps_app.command("list")
def list_apps(
    path: Path = SPEC_PATH,
    as_json: bool = typer.Option(False, "--json", help="Print a JSON array of {id, domain, tasks}."),
) -> None:
    """List apps with their domain and number of tasks."""
    result = _load_or_exit(path)
    rows = [{"id": a.id, "domain": a.domain.value, "tasks": len(a.tasks)} for a in result.apps]
    if as_json:
        print(json.dumps(rows))
    else:
        table = Table("id", "domain", "tasks", title=f"{len(rows)} apps in {path}")
        for row in rows:
            table.add_row(row["id"], row["domain"], str(row["tasks"]))
        console.print(table)
    raise typer.Exit(1 if result.errors else 0)


@apps_app.command("import")
def import_apps(directory: Path = typer.Argument(..., help="A folder of AUI-Gym `id/title/prompt/tags` YAML files.")) -> None:
    """Load AUI-Gym app prompts, map each tag to a domain, and report counts per domain."""
    result = _load_or_exit(directory)
    counts = Counter(a.domain.value for a in result.apps)
    table = Table("domain", "apps", title=f"{len(result.apps)} apps imported", caption=str(directory))
    for domain in Domain:
        table.add_row(domain.value, str(counts.get(domain.value, 0)))
    console.print(table)
    if result.errors:
        err_console.print(f"[red]{len(result.bad_files())} file(s) with problems[/] — see above.")
    raise typer.Exit(1 if result.errors else 0)


@apps_app.command("validate")
def validate_apps(
    path: Path = SPEC_PATH,
    app_id: list[str] = APP_IDS,
    concurrency: int = typer.Option(2, "--concurrency", min=1, max=16, help="Proofs in flight (browser contexts)."),
    v0_dir: Path = typer.Option(
        None, "--v0-dir", help="Prove against existing apps, DIR/<id>/index.html, instead of each spec's reference HTML."
    ),
    tasks_file: Path = typer.Option(
        None, "--tasks-file", help="Tasks per app (YAML/JSON, keyed by app id) instead of the specs' own; apps absent from it are skipped."
    ),
) -> None:
    """Prove in real Chromium that every checker is false at load and true after its solution."""
    if v0_dir is not None and not v0_dir.is_dir():
        raise _fail(f"--v0-dir {v0_dir} is not a directory")
    result = _load_or_exit(path)
    unknown = [name for name in app_id or [] if name not in {a.id for a in result.apps}]
    if unknown:
        raise _fail(f"--app: unknown app id(s) {', '.join(map(repr, unknown))} in {path} (`aui apps list {path}`)")
    apps = [a for a in result.apps if not app_id or a.id in app_id]
    problems: list[str] = []  # file-level: missing v0 HTML (the app's tasks are not proved)
    if tasks_file is not None:
        apps, skipped = _with_file_tasks(apps, tasks_file)
        if skipped:
            console.print(
                f"[yellow]NOTE[/] {len(skipped)} app(s) not in {tasks_file}, skipped: {', '.join(skipped)}", soft_wrap=True
            )
    html_by_app: dict[str, str] = {}
    for spec in apps:
        if v0_dir is not None:
            html_path = v0_dir / spec.id / "index.html"
            if html_path.is_file():
                html_by_app[spec.id] = html_path.read_text(encoding="utf-8")
            elif spec.tasks:
                problems.append(f"{spec.id}: no index.html for app '{spec.id}' in {v0_dir} (expected {html_path})")
        else:
            ref = reference_html_path(spec)
            html_by_app[spec.id] = ref.read_text(encoding="utf-8") if ref else ""
    for problem in problems:
        _fail(problem)

    async def prove_all():
        # Proofs mostly wait on the page settling, so a few contexts in flight on one browser overlap well.
        gate = asyncio.Semaphore(concurrency)

        async def prove(spec, task):
            html = html_by_app.get(spec.id, "")
            if not html:
                return TaskProof(app_id=spec.id, task_id=task.id, problems=["app has no reference_html"])
            async with gate:
                return await prove_task(html, spec.id, task)

        provable = [(spec, task) for spec in apps if v0_dir is None or spec.id in html_by_app for task in spec.tasks]
        return await asyncio.gather(*(prove(spec, task) for spec, task in provable))

    proofs = in_browser(prove_all())
    failing = [p for p in proofs if not p.ok]
    for proof in failing:
        console.print(f"[red]FAIL[/] {proof.app_id}/{proof.task_id}: {'; '.join(proof.problems)}", soft_wrap=True)
    no_tasks = [a.id for a in apps if not a.tasks]
    for app_without in no_tasks:
        console.print(f"[yellow]WARN[/] {app_without}: no tasks to prove")
    file_errors = len(result.bad_files()) + len(problems)
    status = "[green]all hold[/]" if not failing and not file_errors else "[red]problems found[/]"
    console.print(
        f"{len(apps)} apps, {len(proofs)} tasks: {len(proofs) - len(failing)} proved, "
        f"{len(failing)} failing, {file_errors} file errors — {status}"
    )
    raise typer.Exit(0 if not failing and not file_errors else 1)


def _with_file_tasks(apps: list, tasks_file: Path) -> tuple[list, list[str]]:
    """The apps with their tasks replaced by the file's, and the ids of apps the file has none for."""
    kept, skipped = [], []
    for spec in apps:
        try:
            tasks = load_tasks_file(tasks_file, spec.id)
        except TasksFileError as error:
            if f"no tasks for app '{spec.id}'" not in str(error):
                raise _fail(str(error))
            tasks = []
        if tasks:
            kept.append(spec.model_copy(update={"tasks": tasks}))
        else:
            skipped.append(spec.id)
    return kept, skipped


# How a fetched folder is used, by benchmark: the `aui run` flag that reads it.
_USED_AS = {"aui-gym": "--apps", "gpt5-apps": "--v0-dir"}


@apps_app.command("fetch")
def fetch_apps(
    name: str = typer.Argument(..., help=f"The benchmark — {'; '.join(f'{n}: {b.description}' for n, b in known_benchmarks().items())}."),
    to: Path = typer.Option(None, "--to", help="The folder to fill (default: data/NAME in the project folder, git-ignored)."),
    source: Path = typer.Option(
        None, "--from", help="Read the files from a local clone, an unpacked GitHub archive or a folder fetched before, not the network."
    ),
    app_ids: list[str] = APP_IDS,
    only: str = typer.Option(None, "--only", hidden=True, help="The older spelling of --app: ids, comma-separated."),
    tasks_file: Path = typer.Option(
        None, "--tasks-file", help="Only the apps this tasks file has tasks for (e.g. configs/gpt5-tasks.yaml)."
    ),
    force: bool = typer.Option(False, "--force", help="Fetch again even when the folder is already complete."),
    base_url: str = typer.Option(
        None, "--base-url", help=f"Download from BASE/OWNER/REPO/COMMIT/PATH (default: ${BASE_URL_VARIABLE}, else {DEFAULT_BASE_URL})."
    ),
) -> None:
    """Fetch a public benchmark by name, pinned to a commit, every file checked against the sha256 the project keeps
    (the licence always comes along, with all apps or only some)."""
    app_ids = [*(app_ids or []), *comma_list(only)]
    if app_ids and tasks_file is not None:
        raise _fail("give --app or --tasks-file, not both")
    ids = app_ids or None
    if tasks_file is not None:
        with exit_on(TasksFileError):
            ids = tasks_file_app_ids(tasks_file)
        if not ids:
            raise _fail(f"--tasks-file {tasks_file} does not say which apps its tasks are for: name them with --app ID")
    with exit_on(FetchError):
        report = fetch_benchmark(name, to=to, source=source, base_url=base_url, only=ids, force=force)
    _print_fetch(report)


def _print_fetch(report: FetchReport) -> None:
    where = _shown(report.destination)
    pinned = f"{report.repository} at {report.commit[:7]}, {report.license} licence kept as LICENSE"
    if report.fetched:
        console.print(f"{report.benchmark}: {report.files} files, {report.bytes / 1024:,.0f} KiB, each sha256 as pinned — "
                      f"{pinned} — from {report.source} → {where} ({report.seconds:.1f} s)", soft_wrap=True, markup=False)
    else:
        console.print(f"{report.benchmark} is already complete in {where}: {report.files} files, each sha256 as pinned "
                      f"({pinned}); nothing done (--force fetches it again)", soft_wrap=True, markup=False)
    if report.benchmark in _USED_AS:
        console.print(f"use it: aui run {_USED_AS[report.benchmark]} {where} …", soft_wrap=True, markup=False)


def _shown(path: Path) -> str:
    """`path` relative to the working folder when it is inside it (as a user would type it)."""
    here = Path.cwd().resolve()
    return str(path.relative_to(here) if path.is_relative_to(here) else path)
