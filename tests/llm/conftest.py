"""Fixtures for the llm tests: an isolated cache directory, zeroed counters, fast back-off."""

from __future__ import annotations

import base64
import struct
import zlib
from collections.abc import Callable, Iterator

import pytest

from llm import CallCache, ModelClient, RetryPolicy, reset_call_stats
from llm.testing import ScriptedOpenAIServer, scripted_registry

FAST_RETRY = RetryPolicy(backoff_base_s=0.01, backoff_max_s=0.05, retry_after_cap_s=0.5)


@pytest.fixture(autouse=True)
def isolated_llm_env(tmp_path, monkeypatch) -> Iterator[None]:
    monkeypatch.setenv("AUI_CACHE_DIR", str(tmp_path / "aui-cache"))
    monkeypatch.delenv("AUI_LLM_CACHE", raising=False)
    monkeypatch.delenv("AUI_MODELS_CONFIG", raising=False)
    reset_call_stats()
    yield
    reset_call_stats()


@pytest.fixture
def fast_retry() -> RetryPolicy:
    return FAST_RETRY


@pytest.fixture
def cache_dir(tmp_path):
    return tmp_path / "llm-cache"


@pytest.fixture
def make_client(cache_dir) -> Callable[..., ModelClient]:
    """`make_client(server, cache=False, **model_fields)` → a client on a scripted registry."""

    def make(server: ScriptedOpenAIServer, *, cache: bool = True, **fields) -> ModelClient:
        return ModelClient(
            scripted_registry(server, **fields), cache=CallCache(cache_dir, enabled=cache), retry=FAST_RETRY
        )

    return make


def _tiny_png(red: int = 255, green: int = 0, blue: int = 0) -> bytes:

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    pixels = zlib.compress(bytes([0, red, green, blue]))
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")


@pytest.fixture
def tiny_png() -> Callable[..., bytes]:
    """`tiny_png(r, g, b)` → a valid 1x1 PNG; different colours give different bytes."""
    return _tiny_png


@pytest.fixture
def decode_data_url() -> Callable[[str], bytes]:
    return lambda url: base64.b64decode(url.split(",", 1)[1])
