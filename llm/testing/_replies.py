"""What a scripted server answers (`Reply` and the `reply_*` helpers), what it records (`RecordedRequest`),
and the UI-TARS replies tests script."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from .._messages import count_images

ApiKind = Literal["chat", "responses", "other"]


@dataclass
class Reply:
    """One scripted answer. Build it with the `reply_*` helpers rather than by hand."""

    action: Literal["json", "raw", "hang", "reset", "flood"] = "json"
    status: int = 200
    body: Any = None
    """A dict (sent as JSON), bytes (sent as is), or a callable `(RecordedRequest) -> dict`."""
    headers: dict[str, str] = field(default_factory=dict)
    hang_s: float = 0.0
    """For `hang`: how long to send nothing; for `flood`: how long to keep sending."""
    then: Reply | None = None
    """For `hang`: what to send after hanging (usually nobody is listening any more)."""
    chunk_bytes: int = 64 * 1024
    """For `flood`: bytes sent every 10 ms."""


@dataclass
class RecordedRequest:
    """A request the server received."""

    method: str
    path: str
    headers: dict[str, str]
    """Header names in lower case."""
    json: Any
    """The parsed JSON body, or None when the body was not JSON."""
    kind: ApiKind
    bytes_sent: int = 0
    """Body bytes the server wrote in answer (counted for `reply_flood`; 0 for other replies)."""
    delay_s: float = 0.0
    """The latency the server added before answering (`LatencyOpenAIServer`; 0 otherwise)."""
    body_sha256: str = ""
    """sha256 of the raw body: a client's retry of a call sends the same bytes again."""

    def count_images(self) -> int:
        """Images in the body (chat `image_url` parts and Responses `input_image` items)."""
        return count_images(self.json)


def reply_text(
    text: str,
    *,
    finish_reason: str = "stop",
    prompt_tokens: int = 11,
    completion_tokens: int = 7,
    model: str | None = None,
    tool_calls: Any = None,
) -> Reply:
    """A successful reply carrying `text`, shaped for whichever API was called (chat or responses).

    `tool_calls` (chat only) go into the message as given, well-formed or not.
    """

    def body(request: RecordedRequest) -> dict[str, Any]:
        served = model or (request.json or {}).get("model", "scripted")
        if request.kind == "responses":
            item = {
                "type": "message",
                "id": "msg_scripted",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": text, "annotations": []}],
            }
            return responses_body([item], served, prompt_tokens, completion_tokens)
        message: dict[str, Any] = {"role": "assistant", "content": text}
        if tool_calls is not None:
            message["tool_calls"] = tool_calls
        return {
            "id": "chatcmpl-scripted",
            "object": "chat.completion",
            "created": 0,
            "model": served,
            "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }

    return Reply(body=body)


def reply_responses(output_items: Sequence[dict[str, Any]], *, response_id: str = "resp_scripted") -> Reply:
    """A Responses API reply with these output items (e.g. `computer_call`, `message`), 11 input and 7 output tokens."""

    def body(request: RecordedRequest) -> dict[str, Any]:
        served = (request.json or {}).get("model", "scripted")
        return responses_body(list(output_items), served, 11, 7, response_id)

    return Reply(body=body)


def reply_status(status: int, *, retry_after: float | None = None, message: str | None = None) -> Reply:
    """An error status with an OpenAI-style error body, and `Retry-After` when given (seconds)."""
    headers = {} if retry_after is None else {"Retry-After": _number(retry_after)}
    error = {"error": {"message": message or f"scripted {status}", "type": "scripted_error", "code": status}}
    return Reply(status=status, body=error, headers=headers)


def reply_hang(seconds: float, then: Reply | None = None) -> Reply:
    """Accept the request and send nothing for `seconds` (then `then`, default a text reply)."""
    return Reply(action="hang", hang_s=seconds, then=then or reply_text("late reply"))


def reply_malformed(status: int = 200) -> Reply:
    """A response that claims to be JSON but is not."""
    return Reply(action="raw", status=status, body=b'{"choices": [ this is not json', headers={})


def reply_flood(seconds: float = 30.0, *, chunk_bytes: int = 64 * 1024) -> Reply:
    """A 200 chat reply with no Content-Length whose message text never ends: `chunk_bytes` more
    every 10 ms for `seconds`, or until the client hangs up. Only a client that stops reading
    early answers before `seconds`; `RecordedRequest.bytes_sent` says how much went out."""
    return Reply(action="flood", hang_s=seconds, chunk_bytes=chunk_bytes)


def reply_reset() -> Reply:
    """Close the connection abruptly (TCP reset) without sending a response."""
    return Reply(action="reset")


def responses_body(
    items: list[dict[str, Any]], model: str, input_tokens: int, output_tokens: int, response_id: str = "resp_scripted"
) -> dict[str, Any]:
    return {
        "id": response_id,
        "object": "response",
        "created_at": 0,
        "status": "completed",
        "model": model,
        "output": items,
        "usage": {
            "input_tokens": input_tokens,
            "output_tokens": output_tokens,
            "total_tokens": input_tokens + output_tokens,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens_details": {"reasoning_tokens": 0},
        },
    }


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


def kind_of_path(path: str) -> ApiKind:
    bare = path.split("?", 1)[0].rstrip("/")
    if bare.endswith("/chat/completions"):
        return "chat"
    if bare.endswith("/responses"):
        return "responses"
    return "other"


def uitars_click(x: float, y: float, thought: str = "I click the control.") -> str:
    """A UI-TARS-1.5 reply clicking at (x, y) in its smart-resized screenshot pixels."""
    return f"Thought: {thought}\nAction: click(point='<point>{round(x)} {round(y)}</point>')"


def uitars_type(text: str, thought: str = "I type the value.") -> str:
    """A UI-TARS reply typing `text` (quotes and backslashes escaped as its grammar wants)."""
    return f"Thought: {thought}\nAction: type(content='{_escaped(text)}')"


def uitars_finished(content: str = "done", thought: str = "The task is done.") -> str:
    """A UI-TARS reply ending the episode with `content` as its answer."""
    return f"Thought: {thought}\nAction: finished(content='{_escaped(content)}')"


def _escaped(text: str) -> str:
    return text.replace("\\", "\\\\").replace("'", "\\'").replace("\n", "\\n")


def assistant_turns(request: RecordedRequest) -> int:
    """How many assistant messages a chat request carries (for a CUA: the steps it already took)."""
    messages = (request.json or {}).get("messages") if isinstance(request.json, dict) else None
    return sum(1 for m in messages or [] if isinstance(m, dict) and m.get("role") == "assistant")
