"""`aui run | sweep | report | ui | deploy`: thin commands over the flows."""

from __future__ import annotations

import copy
import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import typer
from rich.markup import escape

from cua import DEFAULT_VIEWPORT
from experiment import (
    ConfigError,
    ExperimentConfig,
    check_config,
    check_run_size,
    load_config,
    make_config,
    offline_roles,
    runs_offline,
    tasks_per_app,
)
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

from ._output import _fail, console, err_console
from ._tables import levels_table, results_table

BUDGET_EXIT = 3
"""The exit code of a run that stopped at its budget (`budget reached: …` on stderr)."""

OFFLINE_ROLES = {"coders": ["offline"], "verifier": "offline", "proposer": "offline", "commenter": "offline",
                 "judge": "offline", "cua_policies": ["heuristic"], "detector": "offline"}

FLAG_OF_FIELD = {"apps": "--apps", "app_ids": "--app", "rounds": "--rounds", "revision_modes": "--mode",
                 "coders": "--coder", "cua_policies": "--cua", "cua_model": "--cua-model", "v0_dir": "--v0-dir",
                 "tasks_file": "--tasks-file", "name": "--name", "out_dir": "--out", "models_config": "--models",
                 "concurrency": "--concurrency", "max_steps": "--max-steps", "repeats": "--repeats", "judge": "--judge",
                 "viewport": "--viewport", "commenter_modes": "--commenter-mode", "carry": "--carry", "trace": "--trace",
                 "task_runner": "--task-runner", "dask_address": "--dask-address", "variations": "--variations",
                 "revise_on": "--revise-on", "translator": "--translator"}
"""The `aui run` / `aui sweep` flag that sets each `ExperimentConfig` field: a bad value is blamed on the flag."""


def _execute(config: ExperimentConfig, source: str = "flags", assume_yes: bool = False, verbose: bool = False) -> None:
    # From here on, SIGTERM/SIGINT stop the run in bounded time with one line, instead of killing it
    # half-way or being swallowed by one of its coroutines (`flows._stop`).
    with SignalListener() as listener:
        _run_listening(config, source, listener, assume_yes, verbose)


def _stopped_line(config: ExperimentConfig, what: str) -> str:
    return (f"run '{config.name}' {what}; finished stages are kept (cached): run the same command again to resume "
            f"from them")


def _run_listening(config: ExperimentConfig, source: str, listener, assume_yes: bool, verbose: bool = False) -> None:
    if (stopped := listener.stopped()) is not None:  # a signal while the command started (`aui._entry`)
        raise _fail(_stopped_line(config, f"not started: {stopped}"), stopped.exit_code)
    try:
        app_ids = check_config(config, source=source)  # bad input fails here, before Prefect is even imported
        size = check_run_size(config, app_ids, assume_yes=assume_yes, source=source)
    except ConfigError as exc:
        raise _fail(str(exc)) from None
    if (stopped := listener.stopped()) is not None:
        raise _fail(_stopped_line(config, f"not started: {stopped}"), stopped.exit_code)
    _announce(config, size)
    results = _sweep_on_display(config, app_ids, listener, verbose)
    _print_outcome(config, results)


def _announce(config: ExperimentConfig, size) -> None:
    """Where the run goes, who plays its roles, its size and power, and where Prefect and Dask are."""
    mode = "OFFLINE providers (no model endpoint)" if runs_offline(config) else "model endpoints from " + str(config.models_config or "configs/models.yaml")
    console.print(f"[bold]AUI loop[/] run '{config.name}' → {config.run_dir}  ·  {mode}")
    console.print(escape(size.describe()), soft_wrap=True)
    console.print(escape(size.describe_power()), soft_wrap=True, highlight=False)
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
        try:
            dask_task_runner(config.dask_address)  # fails now, with the install command, if prefect-dask is missing
        except RuntimeError as exc:
            raise _fail(str(exc)) from None
        console.print(f"Stages run on the Dask cluster at {config.dask_address} (prefect-dask).")
    if not config.budget.unlimited and os.environ.get("PREFECT_API_URL"):
        console.print("The budget is kept on the Prefect server: every process of the run charges it "
                      "(global concurrency limits aui-budget-…).")


def _sweep_on_display(config: ExperimentConfig, app_ids: list[str], listener, verbose: bool) -> list:
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
        with RunDisplay(console, config, tasks_per_app(config, app_ids), verbose=verbose):
            return run_stoppable(lambda: sweep(config), listener, on_hard_stop=hard_stop)
    except Stopped as stopped:
        raise _fail(_stopped_line(config, str(stopped)), stopped.exit_code) from None
    except Exception as exc:  # noqa: BLE001 - the CLI's edge: one line, not a traceback (AUI_DEBUG=1 keeps it)
        if debug:
            raise
        code = 2 if isinstance(exc, (ConfigError, ValueError, FileNotFoundError, LookupError)) else 1
        raise _fail(f"run '{config.name}' stopped: {type(exc).__name__}: {exc} "
                    f"(finished stages are kept and cached; fix the cause and run the same command again)", code) from None


def _print_outcome(config: ExperimentConfig, results: list) -> None:
    """The tables, the comparisons, who played offline, what the cache reused, where to look next; the exit code
    says whether the budget stopped the run or a stage failed for good."""
    from ._insights import principle_table
    from ._tables import interval_table, print_comparisons
    from ._variations import variation_table

    rows = table_rows(results, config.weights)
    console.print(results_table(rows, width=console.width))
    console.print(levels_table(rows))
    console.print(interval_table(rows))
    print_comparisons(console, comparisons(results))
    if varied := variation_rows(results):
        console.print(variation_table(varied, width=console.width))
    stopped_by_budget = budget_line(config.run_dir)
    if played_offline := offline_roles(config):
        said = "All roles ran on offline providers" if runs_offline(config) else "Offline providers played"
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
    errors = recorded_errors(results)
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
    for kind, why in (manifest.get("not_reused") or {}).items():
        lines.append(f"  {kind}: not reused — {why}")
    for why in manifest.get("settings_changed") or []:
        lines.append(f"  changed since the last invocation: {why}")
    if manifest.get("reuse_stale"):
        stale = manifest.get("stale_reused") or {}
        lines.append("--reuse-stale: " + ("; ".join(f"{kind} results reused although {why}" for kind, why in stale.items())
                                         if stale else "nothing was stale"))
    return lines


def recorded_errors(results) -> list[str]:
    """Stage errors the sweep recorded instead of raising, once each, naming the app and its track."""
    found: dict[str, None] = {}
    for result in results:
        for error in getattr(result, "errors", None) or []:
            found[f"{result.app_id} ({result.coder} · {result.cua} · {result.mode}): {error}"] = None
    return list(found)


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


def run(
    config_file: Path = typer.Option(None, "--config", "-c", help="Experiment YAML (flags below override it)."),
    offline: bool = typer.Option(False, "--offline", help="Offline providers for every role (heuristic agent)."),
    apps: Path = typer.Option(None, "--apps", help="Folder of app specs (ours or AUI-Gym YAML)."),
    app_ids: list[str] = typer.Option(None, "--app", help="Only these app ids (repeatable)."),
    rounds: int = typer.Option(None, "--rounds", help="Revision rounds after v0."),
    modes: list[str] = typer.Option(None, "--mode", help="unsupported | cua | integrated (repeatable)."),
    coders: list[str] = typer.Option(None, "--coder", help="Coder model name(s) or offline."),
    policies: list[str] = typer.Option(None, "--cua", help="CUA policy: heuristic | uitars | openai-cua."),
    cua_model: str = typer.Option(None, "--cua-model", help="Model for uitars / openai-cua."),
    v0_dir: Path = typer.Option(None, "--v0-dir", help="Existing apps as ID/index.html (initial versions)."),
    tasks_file: Path = typer.Option(None, "--tasks-file", help="Tasks per app (YAML/JSON)."),
    name: str = typer.Option(None, "--name", help="Run name (folder under --out)."),
    out_dir: Path = typer.Option(None, "--out", help="Runs folder (default runs/)."),
    models_config: Path = typer.Option(None, "--models", help="Model registry YAML."),
    concurrency: int = typer.Option(None, "--concurrency", help="Rollouts in flight (default: one per core when the "
                                    "agents are offline, 8 when one calls a model)."),
    max_steps: int = typer.Option(None, "--max-steps", help="One step budget for every rollout (default: each task's "
                                  "level's; 20 without a level)."),
    repeats: int = typer.Option(None, "--repeats", help="Rollouts per task and version, each with its own seed."),
    judge: str = typer.Option(None, "--judge", help="Judge of final_screenshot / flow checks: a model or offline."),
    viewport: str = typer.Option(None, "--viewport", help=f"Browser viewport WIDTHxHEIGHT (default {DEFAULT_VIEWPORT})."),
    variations: str = typer.Option(None, "--variations", help="Comma-separated looks of every version, e.g. "
                                   "default,dark,long,dark+long (default: default). `aui variations` lists them."),
    revise_on: str = typer.Option(None, "--revise-on", help="The variation whose failures the commenter sees (default: default)."),
    translator: str = typer.Option(None, "--translator", help="Model or role translating apps for the german variation."),
    commenter_modes: list[str] = typer.Option(None, "--commenter-mode", help="dashboard | text-only | screenshots-only (repeatable: a sweep axis)."),
    feedback: str = typer.Option(None, "--feedback", help="What the coder is told: commenter (default), defects, "
                                 "commenter+defects, or +defects (the commenter's plus the GUI defects detected)."),
    detector: str = typer.Option(None, "--detector", help="Who detects GUI defects for --feedback +defects: offline or a "
                                 "model / role (e.g. detector)."),
    carry: str = typer.Option(None, "--carry", help="latest (the paper's) | best: which version the next round revises."),
    trace: str = typer.Option(None, "--trace", help="off | failures | all: keep Playwright traces of rollouts."),
    task_runner: str = typer.Option(None, "--task-runner", help="default | dask (stages on a Dask cluster, prefect-dask)."),
    dask_address: str = typer.Option(None, "--dask-address", help="Dask scheduler for --task-runner dask, e.g. tcp://127.0.0.1:8786."),
    max_cost_usd: float = typer.Option(None, "--max-cost-usd", help="Budget: dollars the run may spend on models "
                                       "(kept across re-runs; a higher one resumes)."),
    max_model_calls: int = typer.Option(None, "--max-model-calls", help="Budget: model calls the run may make "
                                        "(cache hits are free)."),
    yes: bool = typer.Option(False, "--yes", help="Start even if the run is larger than max_rollouts."),
    reuse_stale: bool = typer.Option(False, "--reuse-stale", help="Reuse cached stage results even where the code that "
                                     "made them has changed since (printed and recorded in the manifest)."),
    insights: bool = typer.Option(False, "--insights", help="After the sweep, its design insights (the principle table; "
                                  "`aui insights`) in insights.json, the report and a Prefect artifact."),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Prefect's log lines on the console too (always in log.txt)."),
) -> None:
    """Run one experiment (the design loop over the selected apps) and print its results table."""
    overrides = {"apps": apps, "app_ids": app_ids or None, "rounds": rounds, "revision_modes": modes or None,
                 "coders": coders or None, "cua_policies": policies or None, "cua_model": cua_model, "v0_dir": v0_dir,
                 "tasks_file": tasks_file, "name": name, "out_dir": out_dir, "models_config": models_config,
                 "concurrency": concurrency, "max_steps": max_steps, "repeats": repeats, "judge": judge,
                 "viewport": viewport, "revise_on": revise_on, "translator": translator,
                 "variations": [part.strip() for part in variations.split(",") if part.strip()] if variations else None,
                 "commenter_modes": commenter_modes or None, "carry": carry, "trace": trace, "task_runner": task_runner,
                 "dask_address": dask_address, "feedback": feedback, "detector": detector,
                 "reuse_stale": reuse_stale or None, "insights": insights or None}
    if offline:
        overrides.update(OFFLINE_ROLES)
    try:
        if config_file is not None:
            config = load_config(config_file, flags=FLAG_OF_FIELD, **overrides)
        else:
            config = make_config({k: v for k, v in overrides.items() if v is not None}, flags=FLAG_OF_FIELD)
        config = with_budget(config, max_cost_usd, max_model_calls)
    except ConfigError as exc:
        raise _fail(str(exc)) from None
    _execute(config, str(config_file) if config_file is not None else "flags", assume_yes=yes, verbose=verbose)


def with_budget(config: ExperimentConfig, max_cost_usd: float | None, max_model_calls: int | None) -> ExperimentConfig:
    """`config` with the run's budget flags applied over its `budget:` (its per-role limits kept).

    Raises:
        ConfigError: a flag is negative (named).
    """
    update = {key: value for key, value in (("max_cost_usd", max_cost_usd), ("max_model_calls", max_model_calls))
              if value is not None}
    if not update:
        return config
    data = json.loads(config.model_dump_json())
    data["budget"] = {**data["budget"], **update}
    flags = {"max_cost_usd": "--max-cost-usd", "max_model_calls": "--max-model-calls"}
    try:
        return make_config(data, source="flags")
    except ConfigError as exc:
        for field, flag in flags.items():
            if f"budget.{field}" in str(exc):
                raise ConfigError(f"{flag} {update[field]}: must be 0 or more") from None
        raise


def sweep_command(config_file: Path = typer.Argument(..., help="Experiment YAML listing apps × coders × CUAs × modes × rounds."),
                  task_runner: str = typer.Option(None, "--task-runner", help="default | dask (stages on a Dask cluster)."),
                  dask_address: str = typer.Option(None, "--dask-address", help="Dask scheduler, e.g. tcp://127.0.0.1:8786."),
                  trace: str = typer.Option(None, "--trace", help="off | failures | all: keep Playwright traces of rollouts."),
                  max_cost_usd: float = typer.Option(None, "--max-cost-usd", help="Budget: dollars the run may spend "
                                                     "(over the config's budget.max_cost_usd)."),
                  max_model_calls: int = typer.Option(None, "--max-model-calls", help="Budget: model calls the run may "
                                                      "make (over the config's budget.max_model_calls)."),
                  yes: bool = typer.Option(False, "--yes", help="Start even if the run is larger than max_rollouts."),
                  reuse_stale: bool = typer.Option(False, "--reuse-stale", help="Reuse cached stage results even where "
                                                   "the code that made them has changed since (printed and recorded)."),
                  verbose: bool = typer.Option(False, "--verbose", "-v",
                                               help="Prefect's log lines on the console too (always in log.txt).")) -> None:
    """Run a sweep from a config file (re-running it resumes: finished stages come from the cache)."""
    try:
        config = load_config(config_file, flags=FLAG_OF_FIELD, task_runner=task_runner, dask_address=dask_address, trace=trace,
                             reuse_stale=reuse_stale or None)
        config = with_budget(config, max_cost_usd, max_model_calls)
    except ConfigError as exc:
        raise _fail(str(exc)) from None
    _execute(config, str(config_file), assume_yes=yes, verbose=verbose)


def report(run_dir: Path = typer.Argument(..., help="A run folder with results.json.")) -> None:
    """Rebuild results.md/.csv, the plot and report.html from a run's results.json; print the overall figures with
    their 95 % intervals and the paired comparisons of SR."""
    try:
        data = read_results(run_dir)
    except (FileNotFoundError, ValueError) as exc:
        raise _fail(str(exc)) from None
    rows = write_results(run_dir, data.apps, usage=data.usage, offline_roles=data.offline_roles, weights=data.weights,
                         cache=data.cache or None)
    out = write_report(run_dir, rows, data.apps, data.offline_roles, data.usage)

    from ._tables import interval_table, print_comparisons
    from ._variations import variation_table

    console.print(interval_table(rows))
    print_comparisons(console, comparisons(data.apps))
    if varied := variation_rows(data.apps):
        console.print(variation_table(varied, width=console.width))
    console.print(f"report: {out}")
    _print_agreement(run_dir)


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


def ui(port: int = typer.Option(4200, "--port"), host: str = typer.Option("127.0.0.1", "--host")) -> None:
    """Start the Prefect server (UI + API) on this machine and print where it is."""
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

    try:
        config = load_config(config_file)
        check_config(config, source=str(config_file), probe_endpoints=False)  # endpoints may be up by the first run
    except ConfigError as exc:
        raise _fail(str(exc)) from None
    if pool is None and not cron:
        raise _fail("aui deploy: give --cron (served from this process) or --pool (deployed to a work pool's workers)")
    parameters = {"config": json.loads(config.model_dump_json())}
    if pool is not None:
        # The workers load the flow from this project folder (a shared path on other machines): the
        # deployment names the folder and the flow's entrypoint, and a process worker runs it there.
        root = Path(__file__).resolve().parents[1]  # the project folder (this file is aui/_run.py)
        remote = sweep.from_source(source=str(root), entrypoint="flows/_sweep.py:sweep")
        deployment_id = remote.deploy(name=name or config.name, work_pool_name=pool, parameters=parameters,
                                      cron=cron or None, print_next_steps=False)
        console.print(f"Deployed sweep '{config.name}' to work pool '{pool}' (deployment {deployment_id}); start a run with "
                      f"`prefect deployment run 'aui-sweep/{name or config.name}'`.")
        return
    console.print(f"Scheduling sweep '{config.name}' with cron '{cron}'. Needs a Prefect server (aui ui).")
    sweep.serve(name=name or config.name, cron=cron, parameters=parameters)
