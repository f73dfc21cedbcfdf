"""Asking a model role for a reply it can use: a client bound to the role, one bounded loop, every attempt recorded.

Every role that wants something it can read from a model — the commenter, the judge, the detector, the verifier,
the task proposer and the translator a JSON object, the coder an HTML document — asks the same way:

1. its client is bound once to the label its calls are made for (`RoleClient`): the usage row, reply cap and
   budget of those calls;
2. `ask` (or `ask_json`, for JSON against a schema or the role's own reader) sends the request and reads the
   reply; a reply the reader refuses is asked for again as the role's `Repair` says — which part of the
   conversation goes back, with the reply and a prompt quoting what was wrong — at most `attempts` times in all;
3. the `Answer` holds the value read, or none, and every attempt (the reply and why it was not used); an
   unusable last reply is an answer without a value, never a guess.

A role's repair prompt is its own (model prompts are hashed into the run manifest and cache keys); a new role
gets `REPAIR_PROMPT`.
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
from ._registry import ModelRegistry
from ._results import ChatResult, ModelCallError

logger = logging.getLogger("llm")

Value = TypeVar("Value")
QUOTED_REPLY_CHARS = 200
"""How much of an unusable reply `Answer.error` quotes."""
CALL_FAILURES = (ModelCallError, ModelConfigError)
"""`ask`'s `call_errors` for a role that records a failed call rather than raise it: a call that failed for good
(budget refusals and offline models included), or a model that cannot be called (an unset `${ENV}`)."""
REPAIR_PROMPT = "That reply cannot be used: {problem}\nAnswer again with the JSON object only."
"""The repair prompt of a role without one of its own; `{problem}` is what was wrong with the reply."""


class RoleClient:
    """A `ModelClient` bound to the label its calls are made for — one way, for every role.

    `name` is what a config names: a model or a role of the client's registry. With `role`, calls are made for
    `role`, the registry re-bound so that `role` plays `name`'s model: the coder's (and the proposer's) usage,
    reply cap and budget are the role's whatever model plays it. Without, calls are made for `name` itself.

    Raises (constructor):
        UnknownModelError: `name` is neither a model nor a role of the client's registry.
    """

    def __init__(self, client: ModelClient, name: str, *, role: str | None = None) -> None:
        self.name = name
        self.model = client.registry.model_name(name)
        """The registry model behind `name`."""
        self.label = role or name
        """What every call is made for (`ModelClient.chat(role=...)`)."""
        if role is None or client.registry.roles.get(role) == self.model:
            self.client = client
        else:
            self.client = ModelClient(client.registry.with_roles({role: self.model}), cache=client.cache,
                                      ledger=client.ledger, retry=client.retry)

    @property
    def registry(self) -> ModelRegistry:
        return self.client.registry

    async def chat(self, messages: Sequence[Mapping[str, Any]], **params: Any) -> ChatResult:
        """`ModelClient.chat` for this client's label; raises what it raises."""
        return await self.client.chat(messages, role=self.label, **params)


@dataclass(frozen=True)
class ReplyAttempt:
    """One reply a role was sent, and why it was not used (None: it was)."""

    number: int
    """1 for the first request, 2 for the first repair, …"""
    result: ChatResult
    error: Exception | None = None

    @property
    def reply(self) -> str:
        return self.result.text


@dataclass
class Answer(Generic[Value]):
    """What asking got: the value read (None when no reply could be used), every attempt, the conversation."""

    messages: list[Message]
    """The last request and, once a call returned, its reply (a conversation to go on with)."""
    value: Value | None = None
    attempts: list[ReplyAttempt] = field(default_factory=list)
    call_error: Exception | None = None
    """The model call that failed (one of `ask`'s `call_errors`); no attempt follows it."""

    @property
    def ok(self) -> bool:
        return self.call_error is None and bool(self.attempts) and self.attempts[-1].error is None

    @property
    def tokens(self) -> int:
        """Tokens of every reply, the unusable ones included."""
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
        """Why there is no value, in words a record keeps (None when there is one)."""
        if self.call_error is not None:
            return f"model call failed: {self.call_error}"
        if self.ok or not self.attempts:
            return None
        last = self.attempts[-1]
        quoted = last.reply[:QUOTED_REPLY_CHARS] + ("…" if len(last.reply) > QUOTED_REPLY_CHARS else "")
        return f"invalid reply after {len(self.attempts)} attempt(s): {last.error}; last reply: {quoted!r}"


@dataclass(frozen=True)
class Repair:
    """How an unusable reply is asked for again: what `resend` keeps of the conversation, then the reply (its
    first `reply_chars` characters, when given) and `prompt` — a template whose `{problem}` is what was wrong,
    or a function of the reader's error.

    `resend`: "conversation", everything sent so far (repairs pile up); "question", the first request only (each
    repair asks about the last reply alone); "system", the first request's system messages only (its images are
    not sent again: a repair is about form, not about seeing again).
    """

    prompt: str | Callable[[Exception], str] = REPAIR_PROMPT
    resend: Literal["conversation", "question", "system"] = "conversation"
    reply_chars: int | None = None

    def __call__(self, asked: list[Message], sent: list[Message], attempt: ReplyAttempt) -> list[Message]:
        """The next request after `attempt`, the reply to `sent`, whose first request was `asked`."""
        assert attempt.error is not None
        kept = {"conversation": sent, "question": asked,
                "system": [message for message in asked if message.get("role") == "system"]}[self.resend]
        reply = attempt.reply if self.reply_chars is None else attempt.reply[: self.reply_chars]
        prompt = self.prompt.format(problem=attempt.error) if isinstance(self.prompt, str) else self.prompt(attempt.error)
        return [*kept, assistant_message(reply), user_message(prompt)]


NextRequest = Callable[[list[Message], list[Message], ReplyAttempt], list[Message]]
"""`(asked, sent, attempt) -> messages`: what to send after an unusable reply (a `Repair` is one)."""


async def ask(client: RoleClient, messages: Sequence[Message], read: Callable[[ChatResult], Value], *,
              repair: NextRequest = Repair(), attempts: int = 2, params: Mapping[str, Any] | None = None,
              invalid: type[Exception] | tuple[type[Exception], ...] = ValueError,
              call_errors: tuple[type[Exception], ...] = ()) -> Answer[Value]:
    """Send `messages`; `read` the reply; on `invalid`, send `repair(...)`, at most `attempts` requests in all.

    `params` go to every call. A call that fails with one of `call_errors` ends the asking and is recorded
    (`Answer.call_error`); any other failure is raised.

    Raises:
        ValueError: `attempts` is less than 1.
        ModelCallError, ModelConfigError, BudgetReached: a call failed, and `call_errors` does not hold it.
    """
    if attempts < 1:
        raise ValueError(f"attempts must be at least 1, got {attempts}")
    asked = list(messages)
    answer: Answer[Value] = Answer(messages=asked)
    sent = asked
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
            logger.info("%s: reply %d of at most %d cannot be used (%s)", client.label, number, attempts, exc)
            if number < attempts:
                sent = repair(asked, sent, answer.attempts[-1])
            continue
        answer.attempts.append(ReplyAttempt(number, result))
        return answer
    return answer


async def ask_json(client: RoleClient, messages: Sequence[Message],
                   schema: Mapping[str, Any] | type[pydantic.BaseModel] | None = None, *,
                   parse: Callable[[str], Value] | None = None, **options: Any) -> Answer[Any]:
    """`ask` for a JSON reply: read by `parse` (the role's own reader of the reply's text), else by
    `parse_json_reply(text, schema)`, whose `JsonReplyError` says what to repair. `options` are `ask`'s.

    Raises: as `ask`.
    """
    if parse is not None:
        return await ask(client, messages, lambda result: parse(result.text), **options)
    return await ask(client, messages, lambda result: parse_json_reply(result.text, schema), **options)
