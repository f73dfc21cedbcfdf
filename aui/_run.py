"""`aui run | sweep | report | ui | deploy`: thin commands over the flows."""

from __future__ import annotations

import copy
import inspect
import json
import logging
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, Optional

import typer
from rich.markup import escape

from experiment import GROUPS, ConfigError, ExperimentConfig, Plan, check_config, check_run_size, command_config, config_flags, load_config
from flows import SignalListener, Stopped, budget_line, dask_task_runner, run_stoppable
from results import (
    comparisons,
    read_agreement,
    read_insights,
    read_manifest,
    read_results,
    table_rows,
    variation_rows,
    write_report,
    write_results,
)

from ._options import HOST, RUN_DIR
from ._output import _fail, check_port_free, console, err_console, exit_on
from ._tables import interval_table, levels_table, print_comparisons, results_table

BUDGET_EXIT = 3
"""The exit code of a run that stopped at its budget (`budget reached: …` on stderr)."""

def _execute(config: ExperimentConfig, source: str = "flags", assume_yes: bool = False, verbose: bool = False) -> None:
    # From here on, SIGTERM/SIGINT stop the run in bounded time with one line, instead of killing it
    # half-way or being swallowed by one of its coroutines (`flows._stop`).
    with SignalListener() as listener:
        if (stopped := listener.stopped()) is not None:  # a signal while the command started (`aui._entry`)
            raise _fail(_stopped_line(config, f"not started: {stopped}"), stopped.exit_code)
        with exit_on(ConfigError):
            plan = check_config(config, source=source)  # bad input fails here, before Prefect is even imported
            size = check_run_size(config, plan, assume_yes=assume_yes, source=source)
        if (stopped := listener.stopped()) is not None:
            raise _fail(_stopped_line(config, f"not started: {stopped}"), stopped.exit_code)
        _announce(config, plan, size)
        _print_outcome(config, plan, _sweep_on_display(config, plan, listener, verbose))


def _stopped_line(config: ExperimentConfig, what: str) -> str:
    return (f"run '{config.name}' {what}; finished stages are kept (cached): run the same command again to resume "
            f"from them")


def _announce(config: ExperimentConfig, plan: Plan, size) -> None:
    """Where the run goes, who plays its roles, its size and power, and where Prefect and Dask are."""
    mode = "OFFLINE providers (no model endpoint)" if plan.offline else "model endpoints from " + str(config.models_config or "configs/models.yaml")
    console.print(f"[bold]AUI loop[/] run '{config.name}' → {config.run_dir}  ·  {mode}")
    if not plan.offline and (played_offline := plan.offline_roles()):
        console.print(f"[yellow]Offline providers play[/]: {escape(', '.join(played_offline))} (no model named for them)",
                      soft_wrap=True)
    console.print(escape(size.describe()), soft_wrap=True)
    console.print(escape(size.describe_power()), soft_wrap=True, highlight=False)
    if changed := _changed_since_last_run(config):
        console.print(f"[yellow]run '{config.name}' was last made with another config[/] ({escape(changed)}): its results and "
                      "report are replaced by this run's; the stages both share come from the cache", soft_wrap=True)
    if config.reuse_stale:
        console.print("[yellow]--reuse-stale[/]: cached stage results are reused even where the code that made them "
                      "has changed since")
    if not os.environ.get("PREFECT_API_URL"):
        if config.task_runner == "dask":
            # Workers report to the flow's API; an ephemeral server lives inside this process only.
            raise _fail("--task-runner dask needs a Prefect server the Dask workers can reach: run `aui ui` "
                        "and export PREFECT_API_URL=http://127.0.0.1:4200/api")
        console.print("Prefect: ephemeral local server (SQLite). For the UI run [bold]aui ui[/] first and set PREFECT_API_URL.")
    if config.task_runner == "dask":
        with exit_on(RuntimeError):
            dask_task_runner(config.dask_address)  # fails now, with the install command, if prefect-dask is missing
        console.print(f"Stages run on the Dask cluster at {config.dask_address} (prefect-dask).")
    if not config.budget.unlimited and os.environ.get("PREFECT_API_URL"):
        console.print("The budget is kept on the Prefect server: every process of the run charges it "
                      "(global concurrency limits aui-budget-…).")


def _changed_since_last_run(config: ExperimentConfig) -> str:
    """The config fields that differ from those the run folder's manifest recorded (`rounds 1 → 2`), or "" (a first
    run, or the same config resumed)."""
    try:
        before = read_manifest(config.run_dir).get("config") or {}
    except (FileNotFoundError, ValueError):
        return ""
    now = json.loads(config.model_dump_json())

    def shown(value: Any) -> str:  # a list of 52 app ids is said in short
        text = json.dumps(value, ensure_ascii=False)
        return text if len(text) <= 40 else text[:39] + "…"

    return ", ".join(f"{field} {shown(before.get(field))} → {shown(value)}"
                     for field, value in now.items() if before and before.get(field) != value)


def _sweep_on_display(config: ExperimentConfig, plan: Plan, listener, verbose: bool) -> list:
    """The sweep, under the live display, stoppable by a signal; a failure is one line (AUI_DEBUG=1: the traceback)."""
    # Prefect loads with `sweep`, only once the config and the run's size have been checked.
    from flows import sweep

    from ._console import RunDisplay

    debug = bool(os.environ.get("AUI_DEBUG"))
    if not debug:
        _tracebacks_off_the_console()

    def hard_stop(message: str) -> None:
        _fail(_stopped_line(config, message))

    try:
        with RunDisplay(console, config, plan, verbose=verbose):
            return run_stoppable(lambda: sweep(config, plan), listener, on_hard_stop=hard_stop)
    except Stopped as stopped:
        raise _fail(_stopped_line(config, str(stopped)), stopped.exit_code) from None
    except Exception as exc:  # noqa: BLE001 - the CLI's edge: one line, not a traceback (AUI_DEBUG=1 keeps it)
        if debug:
            raise
        code = 2 if isinstance(exc, (ConfigError, ValueError, FileNotFoundError, LookupError)) else 1
        raise _fail(f"run '{config.name}' stopped: {type(exc).__name__}: {exc} "
                    f"(finished stages are kept and cached; fix the cause and run the same command again)"
                    f"{_busy_database_hint(exc)}", code) from None


def _busy_database_hint(exc: Exception) -> str:
    """What to do when Prefect's server answered 503 because its SQLite database was busy (many app flows
    writing at once, e.g. a large run resumed from the cache): a server on PostgreSQL takes them."""
    from prefect.exceptions import PrefectHTTPStatusError
    from prefect.settings import PREFECT_API_DATABASE_CONNECTION_URL, PREFECT_API_URL

    busy = isinstance(exc, PrefectHTTPStatusError) and exc.response.status_code == 503
    on_sqlite = not PREFECT_API_URL.value() or "sqlite" in (PREFECT_API_DATABASE_CONNECTION_URL.value() or "sqlite")
    if not (busy and on_sqlite):
        return ""
    return ("; Prefect's server was busy: on SQLite (the default) many app flows writing at once do that; run this size against a Prefect "
            "server on PostgreSQL (docs/benchmarks.md, \"Beyond one machine\", step 1; PREFECT_API_URL points the run at it)")


def _print_outcome(config: ExperimentConfig, plan: Plan, results: list) -> None:
    """The tables, the comparisons, who played offline, what the cache reused, where to look next; the exit code
    says whether the budget stopped the run or a stage failed for good."""
    from ._insights import principle_table

    rows = table_rows(results, config.weights)
    console.print(results_table(rows, width=console.width))
    console.print(levels_table(rows))
    _print_intervals(rows, results)
    stopped_by_budget = budget_line(config.run_dir)
    if played_offline := plan.offline_roles():
        said = "All roles ran on offline providers" if plan.offline else "Offline providers played"
        console.print(f"[yellow]{said}[/]: {escape(', '.join(played_offline))} (no model endpoint).", soft_wrap=True)
    for line in cache_lines(config.run_dir):
        console.print(escape(line), soft_wrap=True, highlight=False)
    if config.insights and (found := read_insights(config.run_dir)) is not None:
        console.print(principle_table(found))
    console.print(f"Results: {config.run_dir / 'results.md'}  ·  report: {config.run_dir / 'report.html'}")
    console.print(f"Step through it: aui view {config.run_dir.parent} ({config.viewer_url.rstrip('/')}/runs/{config.name})  ·  "
                  "Prefect UI: aui ui (http://127.0.0.1:4200)")
    if stopped_by_budget:
        err_console.print(escape(stopped_by_budget), soft_wrap=True, highlight=False)
        raise typer.Exit(BUDGET_EXIT)
    # The stage errors the sweep recorded instead of raising, once each, naming the app and its track.
    errors = list(dict.fromkeys(f"{result.app_id} ({result.coder} · {result.cua} · {result.mode}): {error}"
                                for result in results for error in result.errors))
    if errors:
        more = f" (and {len(errors) - 1} more; see {config.run_dir / 'results.json'})" if len(errors) > 1 else ""
        raise _fail(f"run '{config.name}' finished, with {len(errors)} failed stage(s): {errors[0]}{more}", 1)


def cache_lines(run_dir: Path) -> list[str]:
    """What this invocation ran and took from the cache, per stage kind, and why earlier results were not reused."""
    try:
        manifest = read_manifest(run_dir)
    except (FileNotFoundError, ValueError):
        return []
    counts = manifest.get("cache") or {}
    lines = []
    if counts:
        parts = [f"{kind} {entry['ran']} ran" + (f", {entry['reused']} reused" if entry["reused"] else "")
                 if entry["ran"] else f"{kind} {entry['reused']} reused" for kind, entry in counts.items()]
        lines.append("Stage runs: " + " · ".join(parts))
    lines += [f"  {kind}: not reused — {why}" for kind, why in (manifest.get("not_reused") or {}).items()]
    lines += [f"  changed since the last invocation: {why}" for why in manifest.get("settings_changed") or []]
    if manifest.get("reuse_stale"):
        stale = manifest.get("stale_reused") or {}
        lines.append("--reuse-stale: " + ("; ".join(f"{kind} results reused although {why}" for kind, why in stale.items())
                                         if stale else "nothing was stale"))
    return lines


class _OneLineFormatter(logging.Formatter):
    """Formats a record as `inner` does, minus its traceback (on a copy: other handlers still get it)."""

    def __init__(self, inner: logging.Formatter | None):
        super().__init__()
        self.inner = inner or logging.Formatter()

    def format(self, record: logging.LogRecord) -> str:
        if not (record.exc_info or record.exc_text or record.stack_info):
            return self.inner.format(record)
        bare = copy.copy(record)
        bare.exc_info, bare.exc_text, bare.stack_info = None, None, None
        return self.inner.format(bare)


def _tracebacks_off_the_console() -> None:
    """Prefect logs a failed task or flow with its traceback; on the terminal show its one-line message only.

    The Prefect API log handler (the UI's logs) still gets the traceback: it handles each record
    on the flow/task run logger, before the record propagates to the root logger's console handler.
    """
    for handler in logging.getLogger().handlers:
        if isinstance(handler, logging.StreamHandler) and not isinstance(handler.formatter, _OneLineFormatter):
            handler.setFormatter(_OneLineFormatter(handler.formatter))


def _config_command(doc: str, config_file: typer.models.ParameterInfo) -> Callable[..., None]:
    """A command taking the config file (`config_file`: an argument or `--config`), every flag of the config
    (`experiment.config_flags`: each field's flag, help and group, declared once on the field), `--offline`, `--yes`
    and `--verbose`; `aui run` and `aui sweep` are two of them."""
    specs = {spec.field.replace(".", "_"): spec for spec in config_flags()}

    def command(config_file: Path | None, offline: bool, yes: bool, verbose: bool, **values) -> None:
        given = {spec.field: values[name] for name, spec in specs.items() if values[name] not in (None, [], ())}
        with exit_on(ConfigError):
            config = command_config(given, config_file, offline)
        _execute(config, str(config_file) if config_file is not None else "flags", assume_yes=yes, verbose=verbose)

    def option(name: str, default: Any, kind: type, decls: list[str], group: str, text: str) -> inspect.Parameter:
        return inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, annotation=kind, default=typer.Option(
            default, *decls, help=escape(text), rich_help_panel=group.title()))

    extra = {"roles": [option("offline", False, bool, ["--offline"], "roles", "Offline providers for every role (the "
                              "heuristic agent); refused together with a flag naming a role's model.")],
             "budget": [option("yes", False, bool, ["--yes"], "budget", "Start even if the run is larger than max_rollouts.")],
             "output": [option("verbose", False, bool, ["--verbose", "-v"], "output",
                               "Prefect's log lines on the console too (always in log.txt).")]}
    # None: not given (the file's or the default value stays); a list is a repeatable flag; a bool one is --x/--no-x
    flags = [option(name, None, Optional[list[str] if spec.type is list else spec.type], [
        f"{spec.flag}/--no-{spec.flag[2:]}" if spec.type is bool else spec.flag], spec.group, spec.help)
             for name, spec in specs.items()]
    grouped = [param for group in GROUPS for param in [*extra.get(group, []),
                                                       *(p for p in flags if specs[p.name].group == group)]]
    command.__signature__ = inspect.Signature([
        inspect.Parameter("config_file", inspect.Parameter.KEYWORD_ONLY, annotation=Optional[Path], default=config_file),
        *grouped])
    command.__doc__ = doc
    return command


run = _config_command("Run one experiment (the design loop over the selected apps) and print its results table.",
                      typer.Option(None, "--config", "-c", help="Experiment YAML (the flags override it)."))
sweep_command = _config_command(
    "Run a sweep from a config file, the flags overriding it (re-running it resumes: finished stages come from the "
    "cache).", typer.Argument(..., help="Experiment YAML listing apps × coders × CUAs × modes × rounds."))


def report(run_dir: Path = RUN_DIR) -> None:
    """Rebuild results.md/.csv, the plot and report.html from a run's results.json; print the overall figures with
    their 95 % intervals and the paired comparisons of SR."""
    with exit_on(FileNotFoundError, ValueError):
        data = read_results(run_dir)
    rows = write_results(run_dir, data.apps, usage=data.usage, offline_roles=data.offline_roles, weights=data.weights,
                         cache=data.cache or None)
    out = write_report(run_dir, rows, data.apps, data.offline_roles, data.usage)
    _print_intervals(rows, data.apps)
    console.print(f"report: {out}")
    _print_agreement(run_dir)


def _print_intervals(rows: list, results: list) -> None:
    """The overall figures with their 95 % intervals, the paired comparisons of SR, and SR per variation."""
    from ._variations import variation_table

    console.print(interval_table(rows))
    print_comparisons(console, comparisons(results))
    if varied := variation_rows(results):
        console.print(variation_table(varied, width=console.width))


def _print_agreement(run_dir: Path) -> None:
    """The pair table of agreement.json (written with the report when the run has judgements or labels)."""
    from ._labels import agreement_table

    agreement = read_agreement(run_dir)
    if agreement is None:
        return
    console.print(agreement_table(agreement))
    for problem in agreement.problems:
        err_console.print(f"[yellow]warning:[/] {escape(problem)}", soft_wrap=True, highlight=False)
    console.print(f"agreement: {run_dir / 'agreement.json'}")


def ui(port: int = typer.Option(4200, "--port", min=1, max=65535, help="Port of the Prefect server (its UI and API)."),
       host: str = HOST) -> None:
    """Start the Prefect server (UI + API) on this machine and print where it is."""
    check_port_free(host, port)
    url = f"http://{host}:{port}"
    console.print(f"Prefect UI: {url}  ·  to send runs there: export PREFECT_API_URL={url}/api")
    command = [sys.executable, "-m", "prefect", "server", "start", "--host", host, "--port", str(port)]
    raise typer.Exit(subprocess.call(command))


def deploy(config_file: Path = typer.Argument(..., help="Experiment YAML."),
           cron: str = typer.Option(None, "--cron", help='Schedule, e.g. "0 3 * * *" (needed without --pool).'),
           name: str = typer.Option(None, "--name", help="Deployment name (default: the config's name)."),
           pool: str = typer.Option(None, "--pool", help="Deploy to this work pool (e.g. a process pool whose workers run "
                                    "on other machines) and return, instead of serving from this process.")) -> None:
    """Serve a scheduled sweep (flow.serve with a cron schedule; runs until interrupted), or deploy it to a work pool."""
    from flows import sweep  # Prefect loads with it: only when a schedule or a deployment is asked for

    with exit_on(ConfigError):
        config = load_config(config_file)
        check_config(config, source=str(config_file), probe_endpoints=False)  # endpoints may be up by the first run
    if pool is None and not cron:
        raise _fail("aui deploy: give --cron (served from this process) or --pool (deployed to a work pool's workers)")
    if cron and not _is_cron(cron):
        raise _fail(f"--cron {cron!r}: not a cron schedule (five fields, e.g. \"0 3 * * *\")")
    if name is not None and "/" in name:
        raise _fail(f"--name {name!r}: a deployment's name cannot hold '/'")
    parameters = {"config": json.loads(config.model_dump_json())}
    if pool is not None:
        # The workers load the flow from this project folder (a shared path on other machines): the
        # deployment names the folder and the flow's entrypoint, and a process worker runs it there.
        root = Path(__file__).resolve().parents[1]  # the project folder (this file is aui/_run.py)
        remote = sweep.from_source(source=str(root), entrypoint="flows/_sweep.py:sweep")
        with exit_on(ValueError):  # no such work pool
            deployment_id = remote.deploy(name=name or config.name, work_pool_name=pool, parameters=parameters,
                                          cron=cron or None, print_next_steps=False)
        console.print(f"Deployed sweep '{config.name}' to work pool '{pool}' (deployment {deployment_id}); start a run with "
                      f"`prefect deployment run 'aui-sweep/{name or config.name}'`.")
        return
    console.print(f"Scheduling sweep '{config.name}' with cron '{cron}'. Needs a Prefect server (aui ui).")
    sweep.serve(name=name or config.name, cron=cron, parameters=parameters)


def _is_cron(cron: str) -> bool:
    from prefect.client.schemas.schedules import CronSchedule

    try:
        CronSchedule(cron=cron)
    except ValueError:  # pydantic's ValidationError
        return False
    return True
