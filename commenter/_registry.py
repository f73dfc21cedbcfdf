"""Commenters by name, and the per-app step: comment on every failed rollout, merge into `Feedback`.

`get_commenter("offline")` measures facts; any other name is a model role or model name from the
model registry ("commenter", "gpt-5", ...), and a name the registry marks offline also gets the
offline commenter, so `--model offline` and an offline role behave the same.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from pathlib import Path
from typing import Protocol

from cua import Trajectory
from llm import ModelClient, Registry

from ._model import DEFAULT_ROLE, MAX_REPAIRS, ModelCommenter
from ._feedback import Feedback, TaskComment, merge_comments
from ._offline import OfflineCommenter


class Commenter(Protocol):
    offline: bool

    async def comment(self, trajectory_dir: Path | str, *, html: str | bytes | None = None) -> TaskComment: ...


COMMENTERS: Registry[type] = Registry("commenter")
COMMENTERS.add("offline", OfflineCommenter)
COMMENTERS.add("model", ModelCommenter)


def get_commenter(
    name: str = DEFAULT_ROLE,
    *,
    client: ModelClient | None = None,
    mode: str = "dashboard",
    max_repairs: int = MAX_REPAIRS,
    **options,
) -> Commenter:
    """The commenter for `name`: "offline", or a model role/name of `client`'s registry.

    `options` go to the offline commenter (use_axe, replay) or become chat params
    of the model commenter. Raises UnknownModelError (listing names) for an unknown model.
    """
    if name in COMMENTERS and getattr(COMMENTERS.get(name), "offline", False):  # its own offline implementation
        return COMMENTERS.get(name)(**options)
    client = client or ModelClient()
    if client.registry.is_offline(name):
        return COMMENTERS.get("offline")(**options)
    return COMMENTERS.get("model")(client, model=name, mode=mode, max_repairs=max_repairs, **options)


async def comment_app(
    app_id: str,
    trajectory_dirs: Iterable[Path | str],
    commenter: Commenter,
    *,
    html: str | bytes | None = None,
    concurrency: int = 4,
) -> Feedback:
    """Comment on the failed trajectories among `trajectory_dirs` and merge them into one `Feedback`.

    Successful rollouts are skipped (the paper comments on failures only). `html` is the app
    version the rollouts used (needed by the offline commenter to measure the page).
    """
    failed = [Path(d) for d in trajectory_dirs if not Trajectory.load(Path(d)).success]
    gate = asyncio.Semaphore(max(1, concurrency))

    async def one(folder: Path) -> TaskComment:
        async with gate:
            return await commenter.comment(folder, html=html)

    comments = await asyncio.gather(*(one(folder) for folder in failed))
    return merge_comments(app_id, comments)
