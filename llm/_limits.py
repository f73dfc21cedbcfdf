"""How large a model's reply may be, and reading a reply body without going past that size.

A model (or whatever answers at its URL) can send a reply far larger than any legitimate one:
5 MB of "HTML" for the coder, a megabyte of "thought" for the CUA. Such a reply is refused by
its size, before it is parsed, cached or handed to a caller, and without reading more of it than
the cap (plus one network chunk).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from ._config import ModelConfig, ModelConfigError

KIB = 1024
MIB = 1024 * KIB

DEFAULT_REPLY_CAPS: dict[str, int] = {
    # A whole single-file app. The largest of the 24 apps we have (../shared/data/gpt5-apps,
    # GPT-5's own) is a 34 KB reply body; the coder's token budget (32k completion tokens at
    # ~4 bytes each, JSON-escaped) ends near 150 KB. 1 MiB refuses nothing a model can write.
    "coder": MIB,
    # JSON documents (task lists, checkers, feedback) of a few KB, on the same 32k-token budget.
    "proposer": 256 * KIB,
    "verifier": 256 * KIB,
    "commenter": 256 * KIB,
    # A verdict of a trajectory: `{success, reason, confidence}`, a few hundred bytes; the same cap
    # as the other JSON roles, since a reasoning model's body carries more than the answer.
    "judge": 256 * KIB,
    # An app's visible texts, translated (the `german` variation): a JSON list no longer than the app.
    "translator": 256 * KIB,
    # A defect call on one transition: `{defect, type, evidence}`, a few hundred bytes, on a JSON role's budget.
    "detector": 256 * KIB,
    # A thought and one action: UI-TARS is given 1,000 tokens (~4 KB of text); a Responses body
    # with a computer_call, a reasoning summary and the echoed request fields is a few KB.
    "cua": 64 * KIB,
}
"""Bytes a reply body may have, by role, unless set otherwise: `reply_caps:` in the model registry
(per role), `max_reply_bytes` on a model entry, or `max_reply_bytes=` of a call (`reply_cap`)."""

DEFAULT_MAX_REPLY_BYTES = MIB
"""The cap for a role not in `DEFAULT_REPLY_CAPS`, and for a call made by a model name that plays
no role: its purpose is unknown, so it gets the most generous role default."""


class ReplyOverCap(Exception):
    """Reading a reply body stopped because it was over its cap (internal; the client turns it
    into `ReplyTooLargeError`). Holds the sizes, never the bytes."""

    def __init__(self, size_bytes: int, *, exact: bool, status: int) -> None:
        super().__init__(size_bytes)
        self.size_bytes = size_bytes
        """The body's size when `exact` (declared by Content-Length, or measured); else how much was read."""
        self.exact = exact
        self.status = status
        """The HTTP status of the reply (0 for one read from the cache)."""


def reply_cap(config: ModelConfig, label: str, roles: Mapping[str, str], override: int | None,
              role_caps: Mapping[str, int]) -> tuple[int, str]:
    """The byte cap of a reply to a call made for `label` (a role or a model name), and where it comes from.

    First of (call > model > role > default):

    1. `override`, the call's `max_reply_bytes=`;
    2. the model entry's `max_reply_bytes` (whatever role it plays);
    3. for a role, its `role_caps` entry (`reply_caps:` in the model registry), else its default
       (`DEFAULT_REPLY_CAPS`); a role of one mode, `commenter:dashboard`, is capped as its role,
       `commenter`, unless it has an entry of its own;
    4. for a call by model name, the largest cap (set or default) among the roles the model plays;
    5. `DEFAULT_MAX_REPLY_BYTES`.

    Raises:
        ValueError: `override` is not a positive integer.
    """
    if override is not None:
        if isinstance(override, bool) or not isinstance(override, int) or override <= 0:
            raise ValueError(f"max_reply_bytes must be a positive number of bytes, got {override!r}")
        return override, "max_reply_bytes= of this call"
    if config.max_reply_bytes is not None:
        return config.max_reply_bytes, f"max_reply_bytes of model {config.name!r}"
    if label in roles:
        return _role_cap(label, role_caps)
    played = [_role_cap(role, role_caps)[0] for role, name in roles.items() if name == config.name]
    if played:
        return max(played), f"largest cap of the roles model {config.name!r} plays"
    return DEFAULT_MAX_REPLY_BYTES, "default for a model that plays no role"


def _role_cap(role: str, role_caps: Mapping[str, int]) -> tuple[int, str]:
    base = role.partition(":")[0]
    for key in dict.fromkeys((role, base)):
        if key in role_caps:
            return role_caps[key], f"reply_caps.{key} of the model registry"
    return DEFAULT_REPLY_CAPS.get(base, DEFAULT_MAX_REPLY_BYTES), f"default for role {base!r}"


def check_reply_caps(caps: object, known_roles: Iterable[str], source: str) -> dict[str, int]:
    """`reply_caps:` of a model registry (role → bytes), checked.

    A key must be a role (`llm.ROLES`, a role of the registry's role map, or a mode of one such as
    `commenter:dashboard`); a value a positive whole number of bytes.

    Raises:
        ModelConfigError: the first problem, naming `source` and the field (`reply_caps.coder`).
    """
    if caps is None:
        return {}
    if not isinstance(caps, Mapping):
        raise ModelConfigError(f"{source}: 'reply_caps' must map role names to bytes, e.g. coder: 1048576")
    known = set(known_roles)
    checked: dict[str, int] = {}
    for role, value in caps.items():
        field = f"reply_caps.{role}"
        if not isinstance(role, str) or not (role in known or role.partition(":")[0] in known):
            raise ModelConfigError(f"{source}: field {field!r}: unknown role {role!r}; roles are {sorted(known)}")
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise ModelConfigError(f"{source}: field {field!r}: must be a positive whole number of bytes "
                                   f"(e.g. 262144 for 256 KiB), got {value!r}")
        checked[role] = value
    return checked


async def read_capped(response: Any, cap: int) -> bytes:
    """The body of an SDK streaming response (`with_streaming_response`), read only while under `cap` bytes.

    A body whose Content-Length is over the cap is refused before any of it is read; otherwise
    the decoded bytes are counted as they arrive and reading stops at the first chunk past the
    cap. Decoded bytes are what is counted, so a small gzip body that inflates past the cap is
    refused too. The caller closes the response (which drops the connection).

    Raises:
        ReplyOverCap: the body is larger than `cap`.
    """
    status = int(getattr(response, "status_code", 0) or 0)
    declared = response.headers.get("content-length", "")
    encoding = response.headers.get("content-encoding", "identity").strip().lower()
    # Content-Length counts encoded bytes; it bounds the decoded size only for an unencoded body.
    if declared.isdigit() and encoding in ("", "identity") and int(declared) > cap:
        raise ReplyOverCap(int(declared), exact=True, status=status)
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.iter_bytes():
        size += len(chunk)
        if size > cap:
            raise ReplyOverCap(size, exact=False, status=status)
        chunks.append(chunk)
    return b"".join(chunks)


def stored_size(raw: Mapping[str, Any]) -> int:
    """About how many bytes a cached reply had on the wire: its compact JSON, UTF-8."""
    return len(json.dumps(raw, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))
