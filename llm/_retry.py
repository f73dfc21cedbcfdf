"""Our retry policy: which failures are worth another attempt, and how long to wait first.

The openai SDK's own retries are switched off (`max_retries=0`) so this is the only policy in
play: every retry is logged, counted and bounded by the model's `max_retries`.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

if TYPE_CHECKING:
    import openai

RETRYABLE_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504, 520, 522, 524, 529})


class RetryPolicy(BaseModel):
    """Exponential back-off with jitter; the number of retries comes from each model's config."""

    backoff_base_s: float = Field(default=1.0, ge=0)
    """Delay before the first retry; doubles with each further retry."""
    backoff_max_s: float = Field(default=30.0, ge=0)
    """Upper bound of the exponential delay."""
    jitter: float = Field(default=0.5, ge=0, le=1)
    """Fraction of the delay that is randomised, so parallel rollouts do not retry in lockstep."""
    retry_after_cap_s: float = Field(default=60.0, ge=0)
    """Longest `Retry-After` we honour; a server asking for more gets this."""

    def delay_s(self, retry_index: int, retry_after_s: float | None = None) -> float:
        """Seconds to wait before retry number `retry_index` (0-based).

        A server's `Retry-After` wins over the exponential delay (capped at `retry_after_cap_s`).
        """
        if retry_after_s is not None:
            return max(0.0, min(retry_after_s, self.retry_after_cap_s))
        delay = min(self.backoff_max_s, self.backoff_base_s * (2**retry_index))
        return delay * (1 - self.jitter * random.random())


@dataclass
class AttemptFailure:
    """Why one HTTP attempt failed, in words safe to log (no key, no headers)."""

    reason: str
    retryable: bool
    status: int | None = None
    retry_after_s: float | None = None


class MalformedResponseError(Exception):
    """The endpoint answered 2xx with a body that is not the JSON the API promises."""


def classify(error: BaseException) -> AttemptFailure | None:
    """What an exception from one attempt means for the retry loop; None if it is not a call failure."""
    # Here, not at the top: the SDK takes ≈ 0.3 s to import, and a process that makes no model client (an
    # offline run, the dashboard-drawing process) never needs it; one that does has imported it already.
    import openai

    if isinstance(error, openai.APITimeoutError | asyncio.TimeoutError | TimeoutError):
        return AttemptFailure("timed out", retryable=True)
    if isinstance(error, openai.APIConnectionError):
        cause = error.__cause__ or error.__context__
        detail = f" ({type(cause).__name__})" if cause is not None else ""
        return AttemptFailure(f"connection error{detail}", retryable=True)
    if isinstance(error, openai.APIStatusError):
        status = error.status_code
        return AttemptFailure(
            f"HTTP {status}: {_short(_server_message(error))}",
            retryable=status in RETRYABLE_STATUS or status >= 500,
            status=status,
            retry_after_s=retry_after_seconds(error.response.headers),
        )
    if isinstance(error, MalformedResponseError):
        return AttemptFailure(f"malformed response: {error}", retryable=True)
    return None


def retry_after_seconds(headers: Any) -> float | None:
    """Seconds the server asked us to wait (`retry-after-ms`, or `Retry-After` as seconds or a date)."""
    if headers is None:
        return None
    millis = headers.get("retry-after-ms")
    if millis:
        with contextlib.suppress(ValueError):
            return max(0.0, float(millis) / 1000)
    value = headers.get("retry-after")
    if not value:
        return None
    with contextlib.suppress(ValueError):
        return max(0.0, float(value))
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - datetime.now(UTC)).total_seconds())


def _server_message(error: openai.APIStatusError) -> str:
    body = error.body
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            return str(inner["message"])
        if isinstance(inner, str):
            return inner
    return error.message


def _short(text: str, limit: int = 300) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
