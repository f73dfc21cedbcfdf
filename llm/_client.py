"""The one async client every package calls models through (chat completions and Responses), and the
process-wide clients that Prefect tasks reach from inside (never passed as arguments)."""

from __future__ import annotations

import asyncio
import logging
import threading
import time
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from ._budget import current_budget
from ._cache import CallCache, request_key
from ._concurrency import endpoint_slot
from ._config import ModelConfig
from ._limits import ReplyOverCap, reply_cap, stored_size
from ._registry import ModelRegistry, load_model_registry
from ._results import ChatResult, ModelCallError, OfflineModelError, ReplyTooLargeError, ResponsesResult
from ._retry import RetryPolicy, classify
from ._transport import Api, make_sdk_client, send
from ._usage import CallRecord, Usage, UsageLedger, count

logger = logging.getLogger("llm")

Result = TypeVar("Result", ChatResult, ResponsesResult)

# Chat parameter names that the Responses API spells differently.
_RESPONSES_RENAMES = {"max_tokens": "max_output_tokens", "max_completion_tokens": "max_output_tokens"}


@dataclass
class _Call:
    """One call under way: what each of its records and errors names."""

    api: Api
    config: ModelConfig
    label: str
    cap: tuple[int, str]
    """The reply's byte cap, and where it comes from (`reply_cap`)."""
    started: float = field(default_factory=time.monotonic)

    @property
    def elapsed_s(self) -> float:
        return time.monotonic() - self.started


class ModelClient:
    """Calls models by role or name, with our retry policy, the on-disk cache and usage accounting.

    One instance can serve many concurrent calls. The underlying `openai` SDK clients are made
    lazily, one per model and event loop, with the SDK's own retries off.
    """

    def __init__(
        self,
        registry: ModelRegistry | str | Path | None = None,
        *,
        cache: bool | CallCache | str | Path = True,
        ledger: UsageLedger | None = None,
        retry: RetryPolicy | None = None,
    ) -> None:
        """`registry` may be a registry, a YAML path, or None for the default `configs/models.yaml`.
        `cache` is True (default directory), False (no cache), a directory, or a `CallCache`.

        Raises:
            ModelConfigError: the registry file could not be loaded.
        """
        self.registry = registry if isinstance(registry, ModelRegistry) else load_model_registry(registry)
        if not isinstance(cache, CallCache):
            cache = CallCache(enabled=cache) if isinstance(cache, bool) else CallCache(cache)
        self.cache = cache
        self.ledger = ledger if ledger is not None else UsageLedger()
        self.retry = retry or RetryPolicy()
        self._sdk_clients: dict[tuple[str, int], tuple[weakref.ref[Any], ModelConfig, Any]] = {}

    async def chat(
        self,
        messages: Sequence[Mapping[str, Any]],
        *,
        role: str | None = None,
        model: str | None = None,
        timeout_s: float | None = None,
        cache: bool | None = None,
        max_reply_bytes: int | None = None,
        **params: Any,
    ) -> ChatResult:
        """One chat-completions call for `role` (or the model named `model`).

        `params` override the model's configured params for this call; a value of None removes a
        configured param. `timeout_s` overrides the model's per-attempt limit; `cache=False`
        bypasses the cache for this call (the reply is still stored). `max_reply_bytes`
        overrides the reply's size cap (default: the model's `max_reply_bytes`, else the role's
        `reply_caps:` entry in the registry, else its `DEFAULT_REPLY_CAPS` entry; `llm.reply_cap`). The result's
        `tool_calls` are validated; a malformed one leaves them empty and sets `result.invalid`.

        Raises:
            ReplyTooLargeError: the reply body is over its cap (not retried, cached or returned).
            ModelCallError: the call failed (non-retryable status, or retries exhausted).
            BudgetReached: the process's budget (`llm.use_budget`) allows no new call.
            OfflineModelError: the role maps to an `offline` model.
            ModelConfigError: unknown role/model, or a `${ENV}` the model needs is unset.
            ValueError: `max_reply_bytes` is not a positive integer.
        """
        request = {"messages": [dict(m) for m in messages]}
        return await self._call(ChatResult, role, model, request, params, timeout_s, cache, max_reply_bytes)

    async def responses(
        self,
        *,
        role: str | None = None,
        model: str | None = None,
        timeout_s: float | None = None,
        cache: bool | None = None,
        max_reply_bytes: int | None = None,
        **kwargs: Any,
    ) -> ResponsesResult:
        """One Responses API call (`input=...`, `tools=...`, `truncation="auto"`, ...).

        The model's configured params are translated for this API (`max_tokens` →
        `max_output_tokens`, `reasoning_effort` → `reasoning.effort`, `verbosity` →
        `text.verbosity`); a keyword argument replaces a configured value of the same name whole
        (e.g. `reasoning={...}` replaces the configured effort). The result's `computer_call` and
        `message` items are validated: see `result.invalid` and `result.computer_calls()`.

        Raises:
            ReplyTooLargeError, ModelCallError, OfflineModelError, ModelConfigError, ValueError:
                as for `chat`.
        """
        return await self._call(ResponsesResult, role, model, {}, kwargs, timeout_s, cache, max_reply_bytes)

    def chat_sync(self, messages: Sequence[Mapping[str, Any]], **kwargs: Any) -> ChatResult:
        """`chat` for synchronous callers (the CLI). Not for use inside a running event loop.

        Raises:
            RuntimeError: called from a thread that is running an event loop.
            (and whatever `chat` raises)
        """
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            pass
        else:
            raise RuntimeError("the *_sync methods cannot run inside an event loop; await chat()/responses() instead")

        async def chat_and_close() -> ChatResult:
            try:
                return await self.chat(messages, **kwargs)
            finally:
                await self._close_loop_clients(asyncio.get_running_loop())

        return asyncio.run(chat_and_close())

    async def aclose(self) -> None:
        """Close the SDK clients made on the running event loop."""
        await self._close_loop_clients(asyncio.get_running_loop())

    async def __aenter__(self) -> ModelClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def _target(self, role: str | None, model: str | None) -> tuple[ModelConfig, str]:
        if (role is None) == (model is None):
            raise ValueError("pass exactly one of role=... or model=...")
        label = role if role is not None else model
        config = self.registry.get(label)
        if config.is_offline:
            raise OfflineModelError(
                f"model {config.name!r} (for {label!r}) is offline and has no endpoint; check "
                f"registry.is_offline({label!r}) and use the offline implementation instead",
                model=config.name,
                endpoint="offline",
            )
        return config, label

    async def _call(
        self,
        result_type: type[Result],
        role: str | None,
        model: str | None,
        request: dict[str, Any],
        overrides: Mapping[str, Any],
        timeout_s: float | None,
        cache: bool | None,
        max_reply_bytes: int | None,
    ) -> Result:
        api: Api = "chat" if result_type is ChatResult else "responses"
        config, label = self._target(role, model)
        configured = config.params.to_request()
        body = {"model": _request_model(config), **request,
                **_merge_params(configured if api == "chat" else _responses_params(configured), overrides)}
        if body.get("stream"):
            raise ValueError("streaming is not supported by ModelClient; omit stream=True")
        cap = reply_cap(config, label, self.registry.roles, max_reply_bytes, self.registry.reply_caps)
        material = {
            "api": api,
            "provider": config.provider,
            "endpoint": config.endpoint(),
            "api_version": config.resolved("api_version"),
            "body": body,
        }
        key = request_key(material)
        use_cache = self.cache.enabled and cache is not False
        call = _Call(api, config, label, cap)
        if use_cache and (entry := self.cache.get(key)) is not None:
            count("cache_hits")
            raw = entry["response"]
            latency = call.elapsed_s
            if (size := stored_size(raw)) > call.cap[0]:
                # Stored under a larger cap (or before caps): refused as a live reply would be.
                raise self._refuse(call, ReplyOverCap(size, exact=True, status=0), retries=0, cached=True)
            self._record(call, usage=Usage.from_response(raw), latency_s=latency, cached=True)
            logger.debug("cache hit for model %r (%s) key %s", config.name, api, key[:12])
            return result_type.from_raw(raw, model=config.name, role=label, cached=True, latency_s=latency, retries=0)

        budget = current_budget()
        if budget is not None:
            await budget.start_call(label, config.name)  # raises BudgetReached: no new call once a limit is reached
        limit = timeout_s if timeout_s is not None else config.timeout_s
        raw, retries = await self._send_with_retries(self._sdk_client(config), call, body, limit)

        latency = call.elapsed_s
        usage = Usage.from_response(raw)
        cost = usage.cost_usd(config.prices)
        self._record(call, usage=usage, latency_s=latency, cost_usd=cost, retries=retries)
        if budget is not None:
            await budget.add_cost(label, cost)
        if self.cache.enabled and raw.get("status") != "failed":
            # Off the event loop: the entry is fsynced, and a CUA request's images are hashed again for
            # it; with many rollouts in flight that would stall every other step on this loop.
            await asyncio.to_thread(self.cache.put, key, request=material, response=raw, latency_s=latency)
        logger.debug("model %r (%s) answered in %.2fs, %d+%d tokens", config.name, api, latency,
                     usage.prompt_tokens, usage.completion_tokens)
        return result_type.from_raw(raw, model=config.name, role=label, cached=False, latency_s=latency,
                                    retries=retries)

    async def _send_with_retries(
        self,
        sdk: Any,
        call: _Call,
        body: dict[str, Any],
        limit: float,
    ) -> tuple[dict[str, Any], int]:
        config = call.config
        endpoint = config.endpoint()
        secret = config.resolved("api_key") or ""
        count("calls")
        retries = 0
        while True:
            count("attempts")
            try:
                # asyncio.timeout bounds the whole attempt, body included; httpx's own timeout is per read.
                # The endpoint's slot is held per attempt (not across a back-off), and its wait is not
                # part of the attempt's time limit.
                async with endpoint_slot(config):
                    async with asyncio.timeout(limit):
                        return await send(sdk, call.api, body, limit, call.cap[0]), retries
            except ReplyOverCap as over:
                raise self._refuse(call, over, retries=retries) from None
            except Exception as error:
                failure = classify(error)
                if failure is None:
                    raise
                # Some servers echo the credential they rejected; never let it reach a log or message.
                reason = _redact(failure.reason, secret)
                attempts = retries + 1
                if failure.retryable and retries < config.max_retries:
                    delay = self.retry.delay_s(retries, failure.retry_after_s)
                    logger.warning(
                        "model %r at %s (%s): %s on attempt %d/%d; retrying in %.2fs",
                        config.name, endpoint, call.api, reason, attempts, config.max_retries + 1, delay,
                    )
                    retries += 1
                    count("retries")
                    await asyncio.sleep(delay)
                    continue
                count("failures")
                self._record(call, latency_s=call.elapsed_s, retries=retries, error=reason)
                verdict = "retries exhausted" if failure.retryable else "not retryable"
                call_error = ModelCallError(
                    f"model {config.name!r} at {endpoint} ({call.api}): {reason} after {attempts} attempt(s), "
                    f"{verdict}",
                    model=config.name,
                    endpoint=endpoint,
                    status=failure.status,
                    attempts=attempts,
                    retryable=failure.retryable,
                )
                # Chain the SDK error for debugging unless its text carries the key.
                leaks = bool(secret) and secret in str(error)
                raise call_error from (None if leaks else error)

    def _refuse(
        self,
        call: _Call,
        over: ReplyOverCap,
        *,
        retries: int,
        cached: bool = False,
    ) -> ReplyTooLargeError:
        """Record a reply refused for its size as a failed call, and the error that says so."""
        limit, source = call.cap
        size = f"{over.size_bytes:,} bytes"
        if not over.exact:
            size = f"at least {size} (reading stopped there)"
        whose = f"role {call.label!r}" if call.label in self.registry.roles else f"{call.label!r}"
        reason = f"{'cached ' if cached else ''}reply of {size} is over the cap of {limit:,} bytes ({source})"
        count("failures")
        self._record(call, latency_s=call.elapsed_s, retries=retries, cached=cached, error=reason)
        endpoint = call.config.endpoint()
        return ReplyTooLargeError(
            f"model {call.config.name!r} at {endpoint} ({call.api}), for {whose}: {reason}; not retried (asking again "
            f"would cost as much). If replies this large are expected, set reply_caps: for the role or "
            f"max_reply_bytes on the model in {self.registry.source}, or pass max_reply_bytes= to the call",
            model=call.config.name,
            endpoint=endpoint,
            role=call.label,
            size_bytes=over.size_bytes,
            cap_bytes=limit,
            size_exact=over.exact,
            status=over.status or None,
            attempts=retries + 1,
        )

    def _record(self, call: _Call, **fields: Any) -> None:
        # The prices let a cache hit report what it saved (the ledger ignores them for other calls).
        prices = call.config.prices
        self.ledger.record(CallRecord(role=call.label, model=call.config.name, api=call.api, priced=prices is not None,
                                      **fields), prices=prices)
    def _sdk_client(self, config: ModelConfig) -> Any:
        loop = asyncio.get_running_loop()
        slot_key = (config.name, id(loop))
        slot = self._sdk_clients.get(slot_key)
        if slot is not None and slot[0]() is loop and slot[1] is config:
            return slot[2]
        client = make_sdk_client(config)
        self._sdk_clients[slot_key] = (weakref.ref(loop), config, client)
        return client

    async def _close_loop_clients(self, loop: asyncio.AbstractEventLoop) -> None:
        for slot_key, (loop_ref, _, client) in list(self._sdk_clients.items()):
            if loop_ref() is loop or loop_ref() is None:
                self._sdk_clients.pop(slot_key, None)
                if loop_ref() is loop:
                    await client.close()


_lock = threading.Lock()
_clients: dict[tuple[str, tuple[tuple[str, str], ...], str], ModelClient] = {}


def get_client(
    models_path: str | Path | None = None,
    roles: Mapping[str, str] | None = None,
    *,
    cache_dir: str | Path | None = None,
) -> ModelClient:
    """The process-wide client for a registry file and role overrides, made once and reused.

    Prefect tasks take the (hashable) path and role overrides as arguments and reach the client
    through this, instead of receiving a live client that would break task caching. Each such
    client keeps its own `ledger`, so a flow can dump usage for the configuration it ran.

    Raises:
        ModelConfigError: the registry could not be loaded or an override names an unknown model.
    """
    memo_key = (_registry_key(models_path), tuple(sorted((roles or {}).items())), str(cache_dir or ""))
    with _lock:
        client = _clients.get(memo_key)
        if client is None:
            registry = load_model_registry(models_path)
            if roles:
                registry = registry.with_roles(roles)
            client = ModelClient(registry, cache=cache_dir if cache_dir is not None else True)
            _clients[memo_key] = client
        return client


def shared_clients(models_path: str | Path | None = ..., /) -> list[ModelClient]:  # type: ignore[assignment]
    """The clients `get_client` has made in this process (e.g. to sum their ledgers at the end of a
    run); given the `models_path` a run passed to `get_client` (None: the default registry), only
    that run's clients — not those of another run in the same process."""
    with _lock:
        if models_path is ...:
            return list(_clients.values())
        path = _registry_key(models_path)
        return [client for key, client in _clients.items() if key[0] == path]


def _registry_key(models_path: str | Path | None) -> str:
    """How a registry file is named in the client memo ("" for the default registry)."""
    return str(Path(models_path).resolve()) if models_path is not None else ""


def _redact(text: str, secret: str) -> str:
    return text.replace(secret, "***") if len(secret) >= 8 else text


def _request_model(config: ModelConfig) -> str:
    # Azure routes by deployment; the model field still goes in the body for non-deployment paths.
    return config.resolved("model") or config.name


def _merge_params(configured: dict[str, Any], overrides: Mapping[str, Any]) -> dict[str, Any]:
    """`configured` with `overrides` over it; an override of None takes the parameter out (a configured None stays)."""
    dropped = {name for name, value in overrides.items() if value is None}
    return {name: value for name, value in {**configured, **overrides}.items() if name not in dropped}


def _responses_params(params: dict[str, Any]) -> dict[str, Any]:
    translated: dict[str, Any] = {}
    for name, value in params.items():
        if name == "reasoning_effort":
            translated.setdefault("reasoning", {})["effort"] = value
        elif name == "verbosity":
            translated.setdefault("text", {})["verbosity"] = value
        else:
            translated[_RESPONSES_RENAMES.get(name, name)] = value
    return translated
