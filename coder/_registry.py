"""Coders by name: the registry, and `get_coder`, which also turns model names into LLM coders."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from llm import ModelClient, Registry, get_client

from ._llm import LLMCoder
from ._models import Coder

CODERS: Registry[Any] = Registry("coder")
"""Coder factories by name: `factory(name, client, **options) -> Coder`. Names not registered
here are model names (or roles) of the model registry and get the LLM coder."""

CODERS.register_lazy("offline", "coder._offline:make_offline_coder")


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
    if name in CODERS:
        return CODERS.get(name)(name, client, v0_dir=v0_dir, **options)
    if client is None:
        client = get_client()
    if client.registry.is_offline(name):
        return CODERS.get("offline")(name, client, v0_dir=v0_dir, **options)
    return LLMCoder(client, name, **options)
