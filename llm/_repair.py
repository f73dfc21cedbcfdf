"""Ask a model for a structured reply, asking once more (or `max_repairs` times) when it is unusable.

The judge and the defect detector both ask this way: the reply is parsed by the caller's `parse`,
which raises on a reply it cannot use; the next attempt sends what was asked, the reply and what is
wrong with it. A failed call or a reply still unusable after the repairs is an error, never a guess.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from ._client import ModelClient
from ._config import ModelConfigError
from ._results import ModelCallError

Parsed = TypeVar("Parsed")
QUOTED_REPLY_CHARS = 200
"""How much of an unusable reply the error quotes."""


@dataclass
class Repaired(Generic[Parsed]):
    """What `ask_with_repair` got: the parsed reply (None on error), the tokens spent, the error."""

    value: Parsed | None
    tokens: int
    error: str | None


async def ask_with_repair(client: ModelClient, asked: Sequence[Any], parse: Callable[[str], Parsed],
                          repair: Callable[[Sequence[Any], str, str], list[Any]], *, role: str, max_repairs: int,
                          params: Mapping[str, Any], invalid: type[Exception] | tuple[type[Exception], ...] = ValueError,
                          ) -> Repaired[Parsed]:
    """Ask `asked`; parse the reply; on `invalid`, ask `repair(asked, reply, problem)` up to `max_repairs` times."""
    messages, tokens, error = list(asked), 0, None
    for attempt in range(1 + max_repairs):
        try:
            reply = await client.chat(messages, role=role, **params)
        except (ModelCallError, ModelConfigError) as exc:
            return Repaired(None, tokens, f"model call failed: {exc}")
        tokens += reply.usage.total_tokens
        try:
            return Repaired(parse(reply.text), tokens, None)
        except invalid as exc:
            quoted = reply.text[:QUOTED_REPLY_CHARS] + ("…" if len(reply.text) > QUOTED_REPLY_CHARS else "")
            error = f"invalid reply after {attempt + 1} attempt(s): {exc}; last reply: {quoted!r}"
            messages = repair(asked, reply.text, str(exc))
    return Repaired(None, tokens, error)
