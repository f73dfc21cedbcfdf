"""The wire: an `openai` SDK client per endpoint, and one request sent with its reply read under a size cap.

`ModelClient` (`_client.py`) decides what to send, when to retry and what to record; this is only
the HTTP exchange, so the body the SDK sends and the bytes read back are in one place.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from ._config import ModelConfig, ModelConfigError
from ._limits import read_capped
from ._results import check_shape
from ._retry import MalformedResponseError

Api = Literal["chat", "responses"]


def make_sdk_client(config: ModelConfig) -> Any:
    """An `openai` SDK async client for `config`, with the SDK's retries off.

    Raises:
        MissingEnvironmentVariableError: a `${ENV}` in the entry is unset.
        ModelConfigError: an openai/azure entry has no api_key.
    """
    api_key = config.resolved("api_key")
    backstop = config.timeout_s + 5  # the per-attempt limit is enforced by asyncio.timeout
    if config.provider in ("openai", "azure") and not api_key:
        hint = "${OPENAI_API_KEY}" if config.provider == "openai" else "${AZURE_OPENAI_API_KEY}"
        raise ModelConfigError(f"model {config.name!r} field 'api_key' is empty; set e.g. api_key: {hint}")
    if config.provider == "azure":
        from openai import AsyncAzureOpenAI

        return AsyncAzureOpenAI(
            api_key=api_key,
            azure_endpoint=config.resolved("base_url") or "",
            azure_deployment=config.resolved("deployment"),
            api_version=config.resolved("api_version"),
            max_retries=0,
            timeout=backstop,
        )
    from openai import AsyncOpenAI

    return AsyncOpenAI(
        # Local servers (vLLM) ignore the key, but the SDK insists on one; never fall back to
        # $OPENAI_API_KEY, which would send a real key to whatever base_url says.
        api_key=api_key or "EMPTY",
        base_url=config.endpoint(),
        max_retries=0,
        timeout=backstop,
    )


async def send(sdk: Any, api: Api, body: dict[str, Any], timeout_s: float, cap: int) -> dict[str, Any]:
    """One request, its reply read up to `cap` bytes and checked for the shape callers act on.

    Raises:
        ReplyOverCap: the body is longer than `cap`.
        MalformedResponseError: the body is not JSON, or not of the shape of `api`'s replies.
    """
    model = body["model"]
    rest = {k: v for k, v in body.items() if k != "model"}
    # The streaming-response wrapper hands over the response before its body is read (the
    # raw-response one reads it whole first), so the body can be refused by its size.
    if api == "chat":
        # The messages go in `extra_body` (which replaces the body's keys as given): as `messages=` the
        # SDK walks them, base64 screenshots and all, in Python on the event loop before sending — a
        # tenth of the loop's time with 16 UI-TARS rollouts in flight (bench/scale.py --profile 16).
        opened = sdk.chat.completions.with_streaming_response.create(
            model=model, messages=[], extra_body=rest, timeout=timeout_s + 5
        )
    else:
        opened = sdk.responses.with_streaming_response.create(model=model, extra_body=rest or None,
                                                              timeout=timeout_s + 5)
    async with opened as response:  # leaving closes the response: an unread rest is dropped with the connection
        content = await read_capped(response, cap)
    try:
        raw = json.loads(content)
    except (ValueError, RecursionError):  # RecursionError: JSON nested deeper than Python's stack
        raise MalformedResponseError(f"{len(content)} bytes that are not JSON") from None
    problem = check_shape(api, raw)
    if problem is not None:
        raise MalformedResponseError(problem)
    return raw
