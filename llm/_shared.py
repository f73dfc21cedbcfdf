"""The process-wide clients that Prefect tasks reach from inside (never passed as arguments)."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from pathlib import Path

from ._client import ModelClient
from ._registry import load_model_registry

_lock = threading.Lock()
_clients: dict[tuple[str, tuple[tuple[str, str], ...], str], ModelClient] = {}


def get_client(
    models_path: str | Path | None = None,
    roles: Mapping[str, str] | None = None,
    *,
    cache_dir: str | Path | None = None,
) -> ModelClient:
    """The process-wide client for a registry file and role overrides, made once and reused.

    Prefect tasks take the (hashable) path and role overrides as arguments and reach the client
    through this, instead of receiving a live client that would break task caching. Each such
    client keeps its own `ledger`, so a flow can dump usage for the configuration it ran.

    Raises:
        ModelConfigError: the registry could not be loaded or an override names an unknown model.
    """
    memo_key = (_registry_key(models_path), tuple(sorted((roles or {}).items())), str(cache_dir or ""))
    with _lock:
        client = _clients.get(memo_key)
        if client is None:
            registry = load_model_registry(models_path)
            if roles:
                registry = registry.with_roles(roles)
            client = ModelClient(registry, cache=cache_dir if cache_dir is not None else True)
            _clients[memo_key] = client
        return client


def shared_clients(models_path: str | Path | None = ..., /) -> list[ModelClient]:  # type: ignore[assignment]
    """The clients `get_client` has made in this process (e.g. to sum their ledgers at the end of a
    run); given the `models_path` a run passed to `get_client` (None: the default registry), only
    that run's clients — not those of another run in the same process."""
    with _lock:
        if models_path is ...:
            return list(_clients.values())
        path = _registry_key(models_path)
        return [client for key, client in _clients.items() if key[0] == path]


def _registry_key(models_path: str | Path | None) -> str:
    """How a registry file is named in the client memo ("" for the default registry)."""
    return str(Path(models_path).resolve()) if models_path is not None else ""
