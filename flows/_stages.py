"""The loop's front half as Prefect tasks: first version, tasks, verdicts. Small, pure in their inputs, cached.

Every stage takes records that hash (`RunContext`, `FileRef`, ids, names) by keyword — never a
browser or an HTTP client, which would break Prefect's caching — and returns a small record. With
caching on their inputs and the code they run (`flows._cache`) and persisted results, re-running a
finished or interrupted sweep skips every finished stage and repeats no model call, and a change to
the code a stage runs makes that stage (and only it) run again. The run key inside `RunContext` is a random
id stored in the run folder: deleting the folder also retires its cache entries, so a fresh run
never trusts files that are gone.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from prefect import task

from apps_prompts import AppSpec, Task, get_proposer, load_app
from coder import CoderError, get_coder
from cua import Viewport
from llm import ModelCallError, RoleProvider, get_client
from verifier import VERDICTS_FILE, verify_app

from ._cache import stage_cache
from ._dask import on_worker_loop
from ._refs import FileRef, RunContext, TasksRef, VerifyRef, VersionRef


def _worth_retrying(task, task_run, state) -> bool:
    """Prefect's stage retries sit on top of the client's own: spend them only on faults that may
    pass (rate limits, 5xx, timeouts), not on a request refused as such (400/401/404), nor on a
    coder reply without usable HTML — the coder already asked again with a nudge, and a stage
    retry would only replay the same (cached) replies."""
    error = state.data
    return not (isinstance(error, CoderError) or (isinstance(error, ModelCallError) and not error.retryable))


STAGE_RETRY_DELAYS_ENV = "AUI_STAGE_RETRY_DELAYS_S"
DEFAULT_STAGE_RETRY_DELAYS_S = (2.0, 10.0)


def stage_retry_delays(value: str | None = None) -> list[float]:
    """The waits (s) before a model stage's second and third attempt: `AUI_STAGE_RETRY_DELAYS_S`
    ("2,10" by default; the test suite shortens them, an endpoint with a slow rate-limit window may
    want them longer). Read once, when the stages are defined.

    Raises:
        ValueError: not two non-negative numbers separated by a comma, naming the variable and value.
    """
    raw = (os.environ.get(STAGE_RETRY_DELAYS_ENV, "") if value is None else value).strip()
    if not raw:
        return list(DEFAULT_STAGE_RETRY_DELAYS_S)
    try:
        delays = [float(part) for part in raw.split(",")]
    except ValueError:
        delays = []
    if len(delays) != 2 or not all(0 <= delay < float("inf") for delay in delays):
        raise ValueError(f"{STAGE_RETRY_DELAYS_ENV}={raw!r}: expected two waits in seconds, e.g. 2,10")
    return delays


MODEL_RETRIES = dict(retries=2, retry_delay_seconds=stage_retry_delays(), retry_jitter_factor=0.5,
                     retry_condition_fn=_worth_retrying)


def model_client(run: RunContext, roles: dict[str, str] | None = None):
    """The process-wide model client for the run's registry (never a stage argument)."""
    from ._limits import use_cross_process_limits

    use_cross_process_limits()  # endpoints' max_concurrency across processes, where several share them
    return get_client(run.models, roles or None)


def client_for(run: RunContext, provider: RoleProvider):
    """The model client a role's provider calls through (None: the role's own implementation calls no registry model;
    a model the registry maps to the offline provider gets one, and its factory takes the offline path)."""
    return model_client(run) if provider.model is not None else None


def read_tasks(run: RunContext, tasks: FileRef) -> list[Task]:
    return [Task.model_validate(item) for item in json.loads(run.read_text(tasks))]


def spec_with_tasks(run: RunContext, app_id: str, tasks: FileRef | None) -> AppSpec:
    """The app's spec with the run's task list in place of the spec's own."""
    spec = load_app(app_id, run.apps)
    return spec if tasks is None else spec.model_copy(update={"tasks": read_tasks(run, tasks)})


def slug(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "-" for c in name)


@task(cache_policy=stage_cache("generate"), persist_result=True, task_run_name="generate {app_id} v0 ({coder.name})", **MODEL_RETRIES)
@on_worker_loop
async def generate_initial(*, run: RunContext, app_id: str, coder: RoleProvider, viewport: Viewport) -> VersionRef:
    """The app's first version, for an agent working in `viewport`, written to `apps/<app>/<coder>/round-0/index.html`."""
    spec = load_app(app_id, run.apps)
    result = await get_coder(coder.name, client_for(run, coder), v0_dir=run.v0_dir).generate(spec, viewport=viewport)
    html = run.write(Path("apps", app_id, slug(coder.name), "round-0", "index.html"), result.html)
    return VersionRef(app_id=app_id, round=0, html=html, coder=coder.name, offline=result.offline,
                      usage=result.usage.model_dump())


@task(cache_policy=stage_cache("propose"), persist_result=True, task_run_name="propose tasks {app_id} ({proposer.name})", **MODEL_RETRIES)
@on_worker_loop
async def propose_tasks(*, run: RunContext, app_id: str, proposer: RoleProvider, tasks_file: FileRef | None,
                        tasks_per_app: int) -> TasksRef:
    """The app's tasks: the spec's own / a tasks file (offline) or N proposed by a model."""
    spec = load_app(app_id, run.apps)
    # the proposer it resolves to says whether it was offline (a model the registry marks offline, a tasks file)
    proposal = await get_proposer(proposer.name, client_for(run, proposer),
                                  tasks_file=run.file(tasks_file) if tasks_file else None).propose(spec, tasks_per_app)
    data = json.dumps([t.model_dump(mode="json") for t in proposal.tasks], indent=1)
    file = run.write(Path("apps", app_id, f"tasks-{slug(proposer.name)}.json"), data)
    return TasksRef(app_id=app_id, file=file, count=len(proposal.tasks), offline=proposal.offline)


@task(cache_policy=stage_cache("verify"), persist_result=True, task_run_name="verify {app_id} r{round}", **MODEL_RETRIES)
@on_worker_loop
async def verify_version(*, run: RunContext, app_id: str, round: int, html: FileRef, tasks: FileRef,
                         verifier: RoleProvider) -> VerifyRef:
    """Per task: solvable? and a checker that passed the gate (writes verdicts.json beside the HTML)."""
    spec = spec_with_tasks(run, app_id, tasks)
    out_dir = run.file(html).parent
    verdicts = await verify_app(spec, run.read_text(html), verifier.name, client=client_for(run, verifier),
                                out_dir=out_dir)
    return VerifyRef(
        app_id=app_id,
        file=run.ref(Path(html.path).parent / VERDICTS_FILE),
        valid={v.task_id: v.valid for v in verdicts.verdicts},  # a checker, or an answer check standing in for one
        reasons={v.task_id: "; ".join(v.reasons) for v in verdicts.verdicts},
        offline=verdicts.offline,
        proof={v.task_id: v.proof for v in verdicts.verdicts},
        proof_reasons={v.task_id: v.proof_reason for v in verdicts.verdicts},
    )
