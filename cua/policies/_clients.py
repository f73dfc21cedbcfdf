"""Where model policies get their client: the one given, or the process-wide one (design.md §5)."""

from __future__ import annotations

from typing import Any

from llm import get_client


def resolve_client(client: Any, models_path: str | None) -> Any:
    """`client` if given, else `llm.get_client(models_path)` (shared per process, never a task argument).

    Raises:
        ModelConfigError: the model registry could not be loaded.
    """
    if client is not None:
        return client

    return get_client(models_path)
