"""What a model call returns, and how it fails."""

from __future__ import annotations

import inspect
from typing import Any

from pydantic import BaseModel, Field, PrivateAttr, ValidationError, model_validator

from ._items import ComputerCall, ToolCall, check_output_items, check_tool_calls
from ._usage import Usage


def first_problem(error: Exception) -> str:
    """What is wrong with a file that did not parse, in one line: a pydantic error's first field and message
    (`apps.0.round: Input should be a valid integer`, `Invalid JSON: …`), else the error's first line."""
    if isinstance(error, ValidationError) and error.errors():
        first = error.errors()[0]
        where = ".".join(map(str, first["loc"]))
        more = f" (and {error.error_count() - 1} more)" if error.error_count() > 1 else ""
        return (f"{where}: {first['msg']}" if where else first["msg"]) + more
    lines = str(error).splitlines()
    return lines[0] if lines else type(error).__name__


class PicklesKeywordFields:
    """Mixin for an exception whose constructor takes keyword-only fields (named in its signature, not
    `**kwargs`), each kept as the attribute of its name: it pickles as `cls(*args, **fields)`,
    subclasses' added fields included.

    An exception pickles as `cls(*args)` by default, which would drop those fields and fail to
    unpickle; a stage's error crosses process boundaries (Dask workers, persisted failures).
    """

    args: tuple[Any, ...]

    def __reduce__(self) -> tuple[Any, ...]:
        parameters = inspect.signature(type(self).__init__).parameters.values()
        fields = {p.name: getattr(self, p.name) for p in parameters if p.kind is p.KEYWORD_ONLY}
        return rebuild_exception, (type(self), self.args, fields)


def rebuild_exception(cls: type[BaseException], args: tuple[Any, ...], fields: dict[str, Any]) -> BaseException:
    """`cls(*args, **fields)`: what `PicklesKeywordFields` unpickles with."""
    return cls(*args, **fields)


# A pickle names its rebuilding function by module and name, so both stay here: persisted stage
# failures refer to `rebuild_exception`, older ones to `_rebuild_error`.
_rebuild_error = rebuild_exception


class ModelCallError(PicklesKeywordFields, RuntimeError):
    """A model call failed for good: a non-retryable status (400, 401, 404, ...) at once, or a
    retryable failure (429, 5xx, timeout, connection, malformed body) after the retries ran out.

    The message names the model and the endpoint, never the API key.
    """

    def __init__(
        self,
        message: str,
        *,
        model: str,
        endpoint: str,
        status: int | None = None,
        attempts: int = 0,
        retryable: bool = False,
    ) -> None:
        super().__init__(message)
        self.model = model
        self.endpoint = endpoint
        self.status = status
        """HTTP status of the last attempt, when there was one."""
        self.attempts = attempts
        self.retryable = retryable
        """True when the last failure was of a retryable kind (retries ran out)."""


class ReplyTooLargeError(ModelCallError):
    """A reply body was larger than its cap (`llm.reply_cap`: the call's or the model's
    `max_reply_bytes`, else the role's `reply_caps:` entry, else `llm.DEFAULT_REPLY_CAPS`).
    Never retried: asking again would cost as much.

    The reply's bytes were not kept, cached or returned; its tokens are unknown, so the usage
    ledger records the call as failed with no tokens.
    """

    def __init__(
        self,
        message: str,
        *,
        model: str,
        endpoint: str,
        role: str,
        size_bytes: int,
        cap_bytes: int,
        size_exact: bool = True,
        status: int | None = None,
        attempts: int = 1,
    ) -> None:
        super().__init__(message, model=model, endpoint=endpoint, status=status, attempts=attempts, retryable=False)
        self.role = role
        """The role (or model name) the call was made for."""
        self.size_bytes = size_bytes
        """The body's size when `size_exact`; otherwise how much was read before reading stopped."""
        self.cap_bytes = cap_bytes
        self.size_exact = size_exact


class OfflineModelError(ModelCallError):
    """A call was made to an `offline` model, which has no endpoint.

    Callers check `registry.is_offline(role)` first and take their deterministic offline path.
    """


class _CallResult(BaseModel):
    """What every model call returns beside its reply."""

    usage: Usage = Field(default_factory=Usage)
    latency_s: float = 0.0
    """Wall time including retries and back-off; near 0 for a cache hit."""
    cached: bool = False
    """True when served from the on-disk cache without contacting the endpoint."""
    model: str
    """Registry model name that answered."""
    role: str
    """Role (or model name) the call was made for."""
    retries: int = 0
    raw: dict[str, Any] = Field(default_factory=dict, repr=False)
    """The response body exactly as received."""

    _invalid: str | None = PrivateAttr(default=None)

    @property
    def invalid(self) -> str | None:
        """Why a part of the reply a caller would act on (chat `tool_calls`; Responses `computer_call` and `message`
        items) is malformed, e.g. `tool_calls[0].id: Field required` or `computer_call output[0].action.click.x: Input
        should be a valid number`; None when all are well-formed. A caller treats such a reply as invalid and asks
        again."""
        return self._invalid


class ChatResult(_CallResult):
    """The outcome of one chat-completions call."""

    text: str
    """The first choice's message content ('' when the model only called tools)."""
    finish_reason: str | None = None
    reasoning: str | None = None
    """Reasoning text, for servers that return it separately (vLLM `reasoning_content`)."""

    _tool_calls: list[ToolCall] = PrivateAttr(default_factory=list)

    @model_validator(mode="after")
    def _check_parts(self) -> ChatResult:
        self._tool_calls, self._invalid = check_tool_calls(self.message)
        return self

    @property
    def message(self) -> dict[str, Any]:
        """The first choice's message dict (e.g. to append to the history)."""
        return _first_message(self.raw)

    @property
    def tool_calls(self) -> list[ToolCall]:
        """The message's tool calls, validated (id, `type: "function"`, a name, JSON-object
        arguments); empty when there are none or when one is malformed (see `invalid`)."""
        return list(self._tool_calls)

    @classmethod
    def from_raw(cls, raw: dict[str, Any], **fields: Any) -> ChatResult:
        choice = raw["choices"][0]
        message = _first_message(raw)
        content = message.get("content")
        if isinstance(content, list):
            content = "".join(part.get("text", "") for part in content if isinstance(part, dict))
        reasoning = message.get("reasoning_content") or message.get("reasoning")
        return cls(
            text=content or "",
            finish_reason=choice.get("finish_reason"),
            usage=Usage.from_response(raw),
            reasoning=reasoning if isinstance(reasoning, str) else None,
            raw=raw,
            **fields,
        )


class ResponsesResult(_CallResult):
    """The outcome of one Responses API call."""

    id: str
    """Response id, for `previous_response_id` on the next call."""
    status: str | None = None
    output: list[dict[str, Any]] = Field(default_factory=list)
    """Output items as plain dicts, as received (`message`, `reasoning`, `computer_call`, ...);
    act on `computer_calls()`, which are validated, and check `invalid` first."""

    _computer_calls: list[ComputerCall] = PrivateAttr(default_factory=list)
    _call_ids: list[str] = PrivateAttr(default_factory=list)

    @model_validator(mode="after")
    def _check_items(self) -> ResponsesResult:
        self._computer_calls, self._call_ids, self._invalid = check_output_items(self.output)
        return self

    def computer_calls(self) -> list[ComputerCall]:
        """The `computer_call` items, validated and typed, in order (when `invalid` is set, only
        the well-formed ones)."""
        return list(self._computer_calls)

    def computer_call_ids(self) -> list[str]:
        """The `call_id` of every `computer_call` item that has one, well-formed or not: the calls
        the next turn must answer. Fewer ids than `items("computer_call")` means a call cannot be
        answered."""
        return list(self._call_ids)

    @property
    def output_text(self) -> str:
        """All `output_text` parts of the `message` items, joined."""
        return "".join(part.get("text", "") for item in self.items("message") for part in item.get("content") or []
                       if isinstance(part, dict) and part.get("type") == "output_text")

    def items(self, item_type: str) -> list[dict[str, Any]]:
        """Output items of one type as received (unvalidated dicts), e.g. `items("reasoning")`."""
        return [item for item in self.output if item.get("type") == item_type]

    @classmethod
    def from_raw(cls, raw: dict[str, Any], **fields: Any) -> ResponsesResult:
        return cls(
            id=str(raw.get("id", "")),
            status=raw.get("status"),
            output=[item for item in raw.get("output") or [] if isinstance(item, dict)],
            usage=Usage.from_response(raw),
            raw=raw,
            **fields,
        )


def check_shape(api: str, raw: Any) -> str | None:
    """Why `raw` is not a usable body for `api`, or None when it is."""
    if not isinstance(raw, dict):
        return f"body is {type(raw).__name__}, not a JSON object"
    if api == "chat":
        choices = raw.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            return _error_text(raw) or "no 'choices' in the body"
        if not isinstance(choices[0].get("message"), dict):
            return "first choice has no 'message'"
        return None
    if not isinstance(raw.get("output"), list):
        return _error_text(raw) or "no 'output' list in the body"
    return None


def _first_message(raw: dict[str, Any]) -> dict[str, Any]:
    choices = raw.get("choices") or [{}]
    message = choices[0].get("message") if isinstance(choices[0], dict) else None
    return message if isinstance(message, dict) else {}


def _error_text(raw: dict[str, Any]) -> str | None:
    error = raw.get("error")
    if isinstance(error, dict) and error.get("message"):
        return f"error in body: {str(error['message'])[:200]}"
    return None
