"""Asking a model role for a reply it can use: the client bound to the role, one bounded loop, every attempt recorded.

The commenter, judge, detector, verifier, task proposer and translator (a JSON object) and the coder (an HTML
document) all ask so: `ask` sends the request and reads the reply; a reply the reader refuses is asked for again
as the role's `Repair` says, at most `attempts` times in all; the `Answer` holds the value (or none: never a guess)
and every attempt with why it was refused. A role's repair prompt is its own: model prompts are hashed into the
run manifest and the cache keys.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, TypeVar

import pydantic

from ._client import ModelClient
from ._config import ModelConfigError
from ._json_reply import parse_json_reply
from ._messages import Message, assistant_message, user_message
from ._results import ChatResult, ModelCallError, ResponsesResult

logger = logging.getLogger("llm")

Value = TypeVar("Value")
CALL_FAILURES = (ModelCallError, ModelConfigError)
"""`call_errors` of a role that records a failed call (budget refusals included) or an unset `${ENV}`, not raise it."""
REPAIR_PROMPT = "That reply cannot be used: {problem}\nAnswer again with the JSON object only."
"""The repair prompt of a role without one of its own; `{problem}` is what was wrong with the reply."""


class RoleClient:
    """A `ModelClient` bound to the label its calls are made for, one way for every role.

    `name` is a model or a role of the client's registry (what a config names). With `role`, calls are made for
    `role`, the registry re-bound so that it plays `name`'s model: the role's usage row, reply cap and budget,
    whatever model plays it (the coder, the proposer). Without, calls are made for `name` itself (the CUA, the judge…).

    Raises (constructor): UnknownModelError, `name` is neither a model nor a role of the registry.
    """

    def __init__(self, client: ModelClient, name: str, *, role: str | None = None) -> None:
        self.model = client.registry.model_name(name)
        self.label = role or name
        if role is None or client.registry.roles.get(role) == self.model:
            self.client = client
        else:
            self.client = ModelClient(client.registry.with_roles({role: self.model}), cache=client.cache,
                                      ledger=client.ledger, retry=client.retry)

    async def chat(self, messages: Sequence[Mapping[str, Any]], **params: Any) -> ChatResult:
        """`ModelClient.chat` for this client's label; raises what it raises."""
        return await self.client.chat(messages, role=self.label, **params)

    async def responses(self, **kwargs: Any) -> ResponsesResult:
        """`ModelClient.responses` for this client's label; raises what it raises."""
        return await self.client.responses(role=self.label, **kwargs)


@dataclass(frozen=True)
class ReplyAttempt:
    """One reply (the `number`th request's), and why the reader refused it (None: it was used)."""

    number: int
    result: ChatResult
    error: Exception | None = None

    @property
    def reply(self) -> str:
        return self.result.text


@dataclass
class Answer(Generic[Value]):
    """What asking got: the value read (None when no reply could be used), every attempt, the conversation (the
    last request and its reply), and the call that failed (one of `ask`'s `call_errors`), if one did."""

    messages: list[Message]
    value: Value | None = None
    attempts: list[ReplyAttempt] = field(default_factory=list)
    call_error: Exception | None = None

    @property
    def ok(self) -> bool:
        return self.call_error is None and bool(self.attempts) and self.attempts[-1].error is None

    @property
    def tokens(self) -> int:
        return sum(attempt.result.usage.total_tokens for attempt in self.attempts)

    def count_into(self, totals: Any) -> None:
        """Add every reply to `totals`, a role's record of its model use: `calls`, `cached_calls`, `prompt_tokens`,
        `completion_tokens`, and `latency_s` (summed to the millisecond, call by call) when it has one."""
        for attempt in self.attempts:
            result = attempt.result
            totals.calls += 1
            totals.cached_calls += int(result.cached)
            totals.prompt_tokens += result.usage.prompt_tokens
            totals.completion_tokens += result.usage.completion_tokens
            if hasattr(totals, "latency_s"):
                totals.latency_s = round(totals.latency_s + result.latency_s, 3)

    @property
    def error(self) -> str | None:
        """Why there is no value, as a record keeps it (None when there is one)."""
        if self.call_error is not None:
            return f"model call failed: {self.call_error}"
        if self.ok or not self.attempts:
            return None
        last = self.attempts[-1]
        quoted = last.reply[:200] + ("…" if len(last.reply) > 200 else "")
        return f"invalid reply after {len(self.attempts)} attempt(s): {last.error}; last reply: {quoted!r}"


@dataclass(frozen=True)
class Repair:
    """The request after a refused reply: what `resend` keeps, the reply (its first `reply_chars` characters, when
    given) and `prompt`, a template of `{problem}` (the reader's error) or a function of that error.

    `resend`: "conversation", all sent so far (repairs pile up); "question", the first request only; "system",
    the first request's system messages only (its images are not sent again: a repair is about form).
    """

    prompt: str | Callable[[Exception], str] = REPAIR_PROMPT
    resend: Literal["conversation", "question", "system"] = "conversation"
    reply_chars: int | None = None

    def __call__(self, asked: list[Message], sent: list[Message], attempt: ReplyAttempt) -> list[Message]:
        kept = {"conversation": sent, "question": asked,
                "system": [message for message in asked if message.get("role") == "system"]}[self.resend]
        reply = attempt.reply if self.reply_chars is None else attempt.reply[: self.reply_chars]
        prompt = self.prompt.format(problem=attempt.error) if isinstance(self.prompt, str) else self.prompt(attempt.error)
        return [*kept, assistant_message(reply), user_message(prompt)]


async def ask(client: RoleClient, messages: Sequence[Message], read: Callable[[ChatResult], Value], *,
              repair: Callable[[list[Message], list[Message], ReplyAttempt], list[Message]] = Repair(),
              attempts: int = 2, params: Mapping[str, Any] | None = None,
              invalid: type[Exception] | tuple[type[Exception], ...] = ValueError,
              call_errors: tuple[type[Exception], ...] = ()) -> Answer[Value]:
    """Send `messages` and `read` the reply; on `invalid`, send `repair(asked, sent, attempt)` (a `Repair`, or the
    role's own): at most `attempts` requests in all, each with `params`. A call failing with one of `call_errors`
    ends the asking, recorded in the answer.

    Raises:
        ValueError: `attempts` is less than 1.
        ModelCallError, ModelConfigError: a call failed, and `call_errors` does not hold the error.
    """
    if attempts < 1:
        raise ValueError(f"attempts must be at least 1, got {attempts}")
    asked = sent = list(messages)
    answer: Answer[Value] = Answer(messages=asked)
    for number in range(1, attempts + 1):
        try:
            result = await client.chat(sent, **(params or {}))
        except call_errors as exc:
            answer.call_error = exc
            return answer
        answer.messages = [*sent, assistant_message(result.text)]
        try:
            answer.value = read(result)
        except invalid as exc:
            answer.attempts.append(ReplyAttempt(number, result, exc))
            logger.info("%s: reply %d of at most %d refused (%s)", client.label, number, attempts, exc)
            sent = repair(asked, sent, answer.attempts[-1]) if number < attempts else sent
            continue
        answer.attempts.append(ReplyAttempt(number, result))
        break
    return answer


async def ask_json(client: RoleClient, messages: Sequence[Message],
                   schema: Mapping[str, Any] | type[pydantic.BaseModel] | None = None, *,
                   parse: Callable[[str], Value] | None = None, **options: Any) -> Answer[Any]:
    """`ask` for JSON: the reply's text read by `parse` (the role's reader), else by `parse_json_reply(text, schema)`,
    whose `JsonReplyError` is what a repair quotes. Raises as `ask`."""
    read = parse or (lambda text: parse_json_reply(text, schema))
    return await ask(client, messages, lambda result: read(result.text), **options)
