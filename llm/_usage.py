"""Token, latency and cost accounting, per call and per role, plus process-wide call counters."""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from ._config import Prices


class Usage(BaseModel):
    """Tokens of one call, as the endpoint reported them (0 when it reported nothing)."""

    prompt_tokens: int = 0
    """Input tokens, images included."""
    completion_tokens: int = 0
    """Output tokens, reasoning tokens included."""
    cached_prompt_tokens: int = 0
    """Part of `prompt_tokens` the provider served from its prompt cache."""
    reasoning_tokens: int = 0
    """Part of `completion_tokens` spent on hidden reasoning."""

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def cost_usd(self, prices: Prices | None) -> float:
        """What these tokens cost at `prices` (0 without them)."""
        return prices.cost_usd(self.prompt_tokens, self.completion_tokens, self.cached_prompt_tokens) if prices else 0.0

    @classmethod
    def from_response(cls, raw: Mapping[str, Any]) -> Usage:
        """Read `usage` from a chat-completions or Responses body (their field names differ)."""
        usage = raw.get("usage")
        if not isinstance(usage, Mapping):
            return cls()

        def number(mapping: Any, *keys: str) -> int:
            values = [mapping.get(key) for key in keys] if isinstance(mapping, Mapping) else []
            return next((int(value) for value in values if isinstance(value, int | float)), 0)

        input_details = usage.get("prompt_tokens_details") or usage.get("input_tokens_details")
        output_details = usage.get("completion_tokens_details") or usage.get("output_tokens_details")
        return cls(
            prompt_tokens=number(usage, "prompt_tokens", "input_tokens"),
            completion_tokens=number(usage, "completion_tokens", "output_tokens"),
            cached_prompt_tokens=number(input_details, "cached_tokens"),
            reasoning_tokens=number(output_details, "reasoning_tokens"),
        )


class CallRecord(BaseModel):
    """One model call as the ledger saw it."""

    role: str
    """The role the call was made for, or the model name when called by name."""
    model: str
    """Registry model name."""
    api: Literal["chat", "responses"]
    usage: Usage = Field(default_factory=Usage)
    latency_s: float = 0.0
    """Wall time of the call including retries and back-off (near 0 for a cache hit)."""
    cost_usd: float = 0.0
    """What the call would cost at the model's prices; a cache hit costs nothing and reports 0."""
    priced: bool = True
    """False when the model has no price table, so `cost_usd` is 0 for lack of information."""
    cached: bool = False
    retries: int = 0
    error: str | None = None
    """Short description of the failure when the call raised."""


class RoleUsage(BaseModel):
    """Everything the ledger recorded for one role."""

    calls: int = 0
    """Real calls that reached an endpoint and succeeded."""
    cached_calls: int = 0
    failed_calls: int = 0
    retries: int = 0
    prompt_tokens: int = 0
    """Tokens of real and cached calls alike (what the results needed)."""
    completion_tokens: int = 0
    latency_s: float = 0.0
    cost_usd: float = 0.0
    """Money spent by real calls."""
    saved_cost_usd: float = 0.0
    """What cache hits would have cost had they been real calls."""
    unpriced_calls: int = 0
    models: list[str] = Field(default_factory=list)

    def add(self, record: CallRecord, saved_cost_usd: float = 0.0) -> None:
        """Fold one call into the totals; `saved_cost_usd` is what a cache hit would have cost."""
        if record.error is not None:
            self.failed_calls += 1
        elif record.cached:
            self.cached_calls += 1
            self.saved_cost_usd += saved_cost_usd
        else:
            self.calls += 1
            self.cost_usd += record.cost_usd
        self.retries += record.retries
        self.prompt_tokens += record.usage.prompt_tokens
        self.completion_tokens += record.usage.completion_tokens
        self.latency_s += record.latency_s
        self.unpriced_calls += 0 if record.priced or record.error else 1
        if record.model not in self.models:
            self.models.append(record.model)


class UsageLedger:
    """Thread-safe log of calls with per-role totals; dump it to JSON at the end of a run."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._records: list[tuple[CallRecord, float]] = []  # each call, and what it saved (a cache hit's cost)

    def record(self, record: CallRecord, *, prices: Prices | None = None) -> None:
        """Add a call. `prices` lets a cache hit report what it saved."""
        saved = record.usage.cost_usd(prices) if record.cached else 0.0
        with self._lock:
            self._records.append((record, saved))

    @property
    def records(self) -> list[CallRecord]:
        with self._lock:
            return [record for record, _ in self._records]

    def by_role(self) -> dict[str, RoleUsage]:
        """Totals per role, roles in the order they first appeared."""
        totals: dict[str, RoleUsage] = {}
        with self._lock:
            for record, saved in self._records:
                totals.setdefault(record.role, RoleUsage()).add(record, saved)
        return totals

    def total(self) -> RoleUsage:
        """Totals over all roles."""
        overall = RoleUsage()
        with self._lock:
            for record, saved in self._records:
                overall.add(record, saved)
        return overall

    def to_dict(self, *, include_calls: bool = False) -> dict[str, Any]:
        """`{"total": ..., "by_role": {...}}`, plus every call when `include_calls`."""
        data: dict[str, Any] = {
            "total": self.total().model_dump(),
            "by_role": {role: usage.model_dump() for role, usage in self.by_role().items()},
        }
        if include_calls:
            data["calls"] = [r.model_dump() for r in self.records]
        return data

    def dump(self, path: str | Path, *, include_calls: bool = True) -> Path:
        """Write `to_dict()` as JSON to `path` (atomically) and return the path."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        temp = path.with_name(f".{path.name}.tmp")
        temp.write_text(json.dumps(self.to_dict(include_calls=include_calls), indent=2), encoding="utf-8")
        temp.replace(path)
        return path


class CallStats(BaseModel):
    """Process-wide counters since start (or the last `reset_call_stats()`)."""

    calls: int = 0
    """Real (non-cached) model calls started: the number a re-run from cache must keep at 0."""
    attempts: int = 0
    """HTTP requests sent to model endpoints, retries included."""
    retries: int = 0
    """Attempts that were retries of a failed attempt."""
    cache_hits: int = 0
    failures: int = 0
    """Calls that raised after their retries ran out (or at once, for non-retryable errors)."""


_stats_lock = threading.Lock()
_stats = CallStats()


def call_stats() -> CallStats:
    """A snapshot of the process-wide counters."""
    with _stats_lock:
        return _stats.model_copy()


def reset_call_stats() -> None:
    """Zero the process-wide counters (benchmarks and tests do this before measuring)."""
    global _stats
    with _stats_lock:
        _stats = CallStats()


def count(event: Literal["calls", "attempts", "retries", "cache_hits", "failures"]) -> None:
    """Increment one process-wide counter."""
    with _stats_lock:
        setattr(_stats, event, getattr(_stats, event) + 1)
