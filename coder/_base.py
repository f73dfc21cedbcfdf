"""What a coder is, and the registry that finds one by name."""

from __future__ import annotations

from abc import ABC, abstractmethod
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from llm import Registry

from apps_prompts import AppSpec

from ._models import GenerationResult, RevisionRequest, RevisionResult

if TYPE_CHECKING:
    from llm import ModelClient


class Coder(ABC):
    """Writes an app's first version and revises it. One instance may serve many apps."""

    offline: ClassVar[bool] = False
    name: str

    @abstractmethod
    async def generate(self, app: AppSpec) -> GenerationResult:
        """The first version of `app`.

        Raises:
            CoderError: no usable HTML could be produced (the message names the model or file).
        """

    @abstractmethod
    async def revise(self, request: RevisionRequest) -> RevisionResult:
        """The next version, with the non-regression contract checked and recorded.

        Raises:
            CoderError: no usable HTML could be produced.
        """


coders: Registry[Any] = Registry("coder")
"""Coder factories by name: `factory(name, client, **options) -> Coder`. Names not registered
here are model names (or roles) of the model registry and get the LLM coder."""

coders.register_lazy("offline", "coder._offline:make_offline_coder")


def get_coder(
    name: str,
    client: ModelClient | None = None,
    *,
    v0_dir: str | Path | None = None,
    **options: Any,
) -> Coder:
    """The coder called `name`: `"offline"`, a registered coder, or a model name / role.

    A model that the registry marks offline also gets the offline coder, so `--offline` runs
    (every role mapped to the offline model) need no special case. `v0_dir` is for the offline
    coder (a folder of `ID/index.html` first versions); `options` go to the coder's constructor.

    Raises:
        UnknownNameError / UnknownModelError: `name` is neither a registered coder nor a model.
    """
    if name in coders:
        return coders.get(name)(name, client, v0_dir=v0_dir, **options)
    if client is None:
        from llm import get_client

        client = get_client()
    if client.registry.is_offline(name):
        return coders.get("offline")(name, client, v0_dir=v0_dir, **options)
    from ._llm import LLMCoder

    return LLMCoder(client, name, **options)
