"""On-disk cache of model calls, keyed by the sha256 of the full request.

A re-run of an experiment should cost nothing and make no model calls, so every successful
reply is stored under a key derived from everything that determines it: the API kind, the
endpoint, the model id and the request body (images replaced by their sha256). The API key is
never part of the key or the stored entry, so cache folders can be shared and inspected.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ._messages import hash_inline_images
from ._registry import PROJECT_ROOT

logger = logging.getLogger("llm.cache")

CACHE_FORMAT_VERSION = 1
"""Bumped when the key material or the entry layout changes, so old entries become misses."""

_OFF_VALUES = {"off", "0", "false", "no", "disabled"}


def default_cache_dir() -> Path:
    """`$AUI_CACHE_DIR/llm` when that variable is set, else `.cache/llm` under the project root."""
    root = os.environ.get("AUI_CACHE_DIR")
    return Path(root) / "llm" if root else PROJECT_ROOT / ".cache" / "llm"


def request_key(material: dict[str, Any]) -> str:
    """The cache key of a request: sha256 of its canonical JSON with inline images hashed."""
    canonical = json.dumps({"cache_format": CACHE_FORMAT_VERSION, **hash_inline_images(material)}, sort_keys=True,
                           separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


class CallCache:
    """A directory of `<key[:2]>/<key>.json` entries.

    Reads treat anything unreadable or malformed as a miss; writes are atomic (temp file +
    `os.replace`), so a crash or a concurrent writer never leaves a half-written entry behind.
    Write failures are logged and otherwise ignored: a full disk must not fail an experiment.
    """

    def __init__(self, directory: str | Path | None = None, *, enabled: bool = True) -> None:
        self.directory = Path(directory) if directory is not None else default_cache_dir()
        self._enabled = enabled

    @property
    def enabled(self) -> bool:
        """False when constructed with `enabled=False` or while `$AUI_LLM_CACHE` is `off` (or `0`, `false`, `no`,
        `disabled`)."""
        # Read the variable on every call so it can be flipped for one run without new clients.
        return self._enabled and os.environ.get("AUI_LLM_CACHE", "").strip().lower() not in _OFF_VALUES

    def path_for(self, key: str) -> Path:
        """Where the entry for `key` lives (whether or not it exists)."""
        return self.directory / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict[str, Any] | None:
        """The stored entry for `key`, or None on a miss, a disabled cache or a corrupt file."""
        if not self.enabled:
            return None
        path = self.path_for(key)
        try:
            entry = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as error:
            logger.warning("ignoring unreadable cache entry %s (%s)", path, type(error).__name__)
            return None
        if (
            not isinstance(entry, dict)
            or entry.get("key") != key
            or entry.get("format") != CACHE_FORMAT_VERSION
            or not isinstance(entry.get("response"), dict)
        ):
            logger.warning("ignoring malformed cache entry %s", path)
            return None
        return entry

    def put(self, key: str, *, request: dict[str, Any], response: dict[str, Any], latency_s: float) -> None:
        """Store a successful reply. `request` is stored with images hashed, for people inspecting the cache."""
        if not self.enabled:
            return
        entry = {
            "format": CACHE_FORMAT_VERSION,
            "key": key,
            "created": datetime.now(UTC).isoformat(timespec="seconds"),
            "latency_s": latency_s,
            "request": hash_inline_images(request),
            "response": response,
        }
        path = self.path_for(key)
        temp_name: str | None = None
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with tempfile.NamedTemporaryFile(
                "w", encoding="utf-8", dir=path.parent, prefix=f".{key[:8]}-", suffix=".tmp", delete=False
            ) as handle:
                temp_name = handle.name
                json.dump(entry, handle, ensure_ascii=False)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(temp_name, path)
            temp_name = None
        except OSError as error:
            logger.warning("could not write cache entry %s: %s", path, error)
        finally:
            if temp_name is not None:
                with contextlib.suppress(OSError):
                    os.unlink(temp_name)

    def __repr__(self) -> str:
        return f"CallCache({str(self.directory)!r}, enabled={self.enabled})"
