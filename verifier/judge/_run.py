"""Judging a finished run: every trajectory, in parallel with a bound, one line each in judgements.jsonl.

    judgements = await judge_run("runs/demo", judge="offline")                 # the baseline, no model
    judgements = await judge_run("runs/demo", judge="judge", mode="flow")      # the `judge` role's model

Cached like every model stage: a trajectory already judged (without error) by the same judge, mode
and prompt (`prompt_sha256`), and whose trajectory.json has not changed since, is not judged again;
a judgement that ended in an error is asked again (model calls go through the llm call cache too,
so an identical request costs nothing). The file only grows, one locked `write` per line: a crash
loses at most the line being written, and `read_judgements` skips such a cut line. When a
trajectory was judged more than once, the latest line is its judgement.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Callable
from pathlib import Path

from cua import TRAJECTORY_FILE
from llm import ModelClient, ModelConfigError, Registry

from ._offline import OFFLINE_JUDGE
from ._prompts import MODES
from ._records import (JUDGEMENTS_FILE, Judgement, JudgeMode, TrajectoryJudge, TrajectoryRef, append_records,
                       read_records, run_trajectories)

DEFAULT_CONCURRENCY = 4
"""Trajectories judged at once: model calls overlap their waits; the offline judge hardly waits at all."""


MODEL_JUDGE = "model"
"""The registry name of the model judge: `get_judge` gives it every name that is a model (or role) with an endpoint."""

JUDGES: Registry[Callable[..., TrajectoryJudge]] = Registry("judge")
"""Judges by name, each imported when first chosen: `OfflineJudge()`, `ModelJudge(client, model, mode)`."""
JUDGES.register_lazy(OFFLINE_JUDGE, "verifier.judge._offline:OfflineJudge")
JUDGES.register_lazy(MODEL_JUDGE, "verifier.judge._model:ModelJudge")


def read_judgements(run_dir: Path | str) -> list[Judgement]:
    """Every judgement in `run_dir/judgements.jsonl`, in file order; lines that cannot be read (a torn last line)
    are skipped, as the agreement report skips them (`agreement_report(...).problems` names each)."""
    return read_records(Path(run_dir) / JUDGEMENTS_FILE, Judgement)[0]


def latest_judgements(judgements: list[Judgement]) -> dict[tuple[str, str, str], Judgement]:
    """The latest judgement per (trajectory, judge, mode): the one the agreement report counts."""
    return {(j.trajectory_id, j.judge, j.mode): j for j in judgements}


def append_judgement(run_dir: Path | str, judgement: Judgement) -> None:
    """Append one line to `run_dir/judgements.jsonl` as `append_records` does (raises its OSError)."""
    append_records(Path(run_dir) / JUDGEMENTS_FILE, [judgement])


def get_judge(judge: str = OFFLINE_JUDGE, mode: JudgeMode = "screenshot", client: ModelClient | None = None) -> TrajectoryJudge:
    """The judge `judge` names: 'offline', or a model role or name of the client's registry (a role
    or model that is offline in the registry gives the offline judge), built by its `JUDGES` entry.

    Raises:
        ValueError: `mode` is unknown, or the offline judge was asked for the flow mode.
        UnknownModelError: no such role or model (the message lists them).
        ModelConfigError: the model needs an environment variable that is not set, or the registry file is bad.
    """
    if mode not in MODES:
        raise ValueError(f"judge mode {mode!r} is not one of {', '.join(MODES)}")
    if judge != OFFLINE_JUDGE:
        client = client or ModelClient()
        config = client.registry.get(judge)
        if not config.is_offline:
            for part in ("base_url", "api_key", "api_version", "deployment"):
                config.resolved(part)  # an unset ${VAR}: named now, not once per trajectory
            if config.provider in ("openai", "azure") and not config.resolved("api_key"):
                raise ModelConfigError(f"model {config.name!r} field 'api_key' is empty")
            return JUDGES.get(MODEL_JUDGE)(client, judge, mode)
    offline = JUDGES.get(OFFLINE_JUDGE)
    if mode != offline.mode:
        raise ValueError(f"the offline judge reads the final page's text only: use mode {offline.mode!r}, not {mode!r}")
    return offline()


async def judge_run(
    run_dir: Path | str,
    judge: str = OFFLINE_JUDGE,
    mode: JudgeMode = "screenshot",
    client: ModelClient | None = None,
    *,
    concurrency: int = DEFAULT_CONCURRENCY,
) -> list[Judgement]:
    """Judge every trajectory of the finished run in `run_dir`; returns one judgement per trajectory
    (cached ones included), in results order, and appends the new ones to judgements.jsonl.

    `judge` is 'offline' or a model role or name (`client`'s registry, default configs/models.yaml).
    A trajectory that cannot be judged gets a judgement with `success=None` and `error`.

    Raises:
        FileNotFoundError: `run_dir` has no results.json (not a finished run).
        ValueError: results.json is unreadable, or `mode` is unusable (see `get_judge`).
        UnknownModelError, ModelConfigError: as for `get_judge`.
    """
    run_dir = Path(run_dir)
    refs = run_trajectories(run_dir)
    owned = client is None and judge != OFFLINE_JUDGE  # a client made here is closed here
    client = client or (ModelClient() if judge != OFFLINE_JUDGE else None)
    chosen = get_judge(judge, mode, client)
    done = {
        (j.trajectory_id, j.trajectory_sha256): j
        for j in read_judgements(run_dir)
        if j.success is not None and (j.judge, j.mode, j.prompt_sha256) == (chosen.name, chosen.mode, chosen.prompt_sha256)
    }
    gate = asyncio.Semaphore(max(1, concurrency))

    async def one(ref: TrajectoryRef) -> Judgement:
        sha = _trajectory_sha(run_dir / ref.trajectory_id)
        cached = done.get((ref.trajectory_id, sha)) if sha is not None else None
        if cached is not None:
            return cached
        async with gate:
            judgement = await chosen.judge(ref, run_dir)
        judgement.trajectory_sha256 = sha
        await asyncio.to_thread(append_judgement, run_dir, judgement)  # a lock and an fsync: off the event loop
        return judgement

    try:
        return list(await asyncio.gather(*(one(ref) for ref in refs)))
    finally:
        if owned and client is not None:
            await client.aclose()


def _trajectory_sha(folder: Path) -> str | None:
    try:
        return hashlib.sha256((folder / TRAJECTORY_FILE).read_bytes()).hexdigest()
    except OSError:
        return None
