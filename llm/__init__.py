"""Models: the registry (YAML with lazy `${ENV}`), one async OpenAI-compatible client with retries,
an on-disk call cache, token/cost accounting, and the generic name registry other packages reuse.

    registry = load_model_registry()                       # configs/models.yaml
    client = ModelClient(registry.with_roles({"cua": "uitars-1.5-7b"}))
    result = await client.chat([system_message("..."), user_message("...", images=[png])], role="coder")

Model output is untrusted: a reply body over its size cap (`reply_cap`: a call's or a model's
`max_reply_bytes`, else `reply_caps:` per role in the registry, else the role's
`DEFAULT_REPLY_CAPS`) fails the call with `ReplyTooLargeError`, unread past the cap; the parts
callers act on (chat `tool_calls`, Responses `computer_call` and `message` items) are validated,
and a malformed one sets `result.invalid` for the caller to ask again. A reply asked for as JSON is
read with `parse_json_reply(text, schema)`: fenced, bare or in prose, checked against a JSON Schema
or a pydantic model, and a `JsonReplyError` saying what is wrong when it cannot be used.
Every model role asks through one seam: `ask_json(RoleClient(client, "judge"), messages, SCHEMA,
repair=Repair(PROMPT))` reads, repairs and records every attempt (`Answer`).

Tests use `llm.testing.ScriptedOpenAIServer` to drive the real client against scripted replies.
"""

from ._ask import CALL_FAILURES, REPAIR_PROMPT, Answer, Repair, ReplyAttempt, RoleClient, ask, ask_json
from ._budget import (
    BUDGET_REACHED,
    Budget,
    BudgetLimits,
    BudgetReached,
    BudgetTally,
    LocalTally,
    RunBudget,
    Spent,
    budget_in_this_task,
    current_budget,
    use_budget,
)
from ._cache import CallCache, default_cache_dir, request_key
from ._client import ModelClient, get_client, shared_clients
from ._concurrency import ProcessSemaphore, endpoint_limit, model_calls_now, set_cross_process_limiter
from ._config import (
    ROLES,
    MissingEnvironmentVariableError,
    ModelConfig,
    ModelConfigError,
    ModelParams,
    Prices,
    Provider,
)
from ._items import ComputerAction, ComputerCall, FunctionCall, PathPoint, ToolCall
from ._json_reply import JsonReplyError, JsonReplyProblem, parse_json_reply
from ._latency import Latency
from ._limits import DEFAULT_MAX_REPLY_BYTES, DEFAULT_REPLY_CAPS, reply_cap
from ._messages import (
    Message,
    assistant_message,
    hash_inline_images,
    image_data_url,
    system_message,
    user_message,
)
from ._provider import RoleProvider
from ._registry import DEFAULT_MODELS_PATH, ModelRegistry, UnknownModelError, load_model_registry
from ._registry_base import LazyEntry, MissingOptionalPackageError, Registry, UnknownNameError
from ._results import (
    ChatResult,
    ModelCallError,
    OfflineModelError,
    PicklesKeywordFields,
    ReplyTooLargeError,
    ResponsesResult,
    first_problem,
)
from ._retry import RetryPolicy
from ._transport import make_sdk_client
from ._usage import CallRecord, CallStats, RoleUsage, Usage, UsageLedger, call_stats, reset_call_stats

__all__ = [
    "BUDGET_REACHED",
    "CALL_FAILURES",
    "DEFAULT_MAX_REPLY_BYTES",
    "DEFAULT_MODELS_PATH",
    "DEFAULT_REPLY_CAPS",
    "REPAIR_PROMPT",
    "ROLES",
    "Answer",
    "Budget",
    "BudgetLimits",
    "BudgetReached",
    "BudgetTally",
    "CallCache",
    "CallRecord",
    "CallStats",
    "ChatResult",
    "ComputerAction",
    "ComputerCall",
    "FunctionCall",
    "JsonReplyError",
    "JsonReplyProblem",
    "Latency",
    "LazyEntry",
    "LocalTally",
    "Message",
    "MissingEnvironmentVariableError",
    "MissingOptionalPackageError",
    "ModelCallError",
    "ModelClient",
    "ModelConfig",
    "ModelConfigError",
    "ModelParams",
    "ModelRegistry",
    "OfflineModelError",
    "PathPoint",
    "PicklesKeywordFields",
    "Prices",
    "ProcessSemaphore",
    "Provider",
    "Registry",
    "Repair",
    "ReplyAttempt",
    "ReplyTooLargeError",
    "ResponsesResult",
    "RetryPolicy",
    "RoleClient",
    "RoleProvider",
    "RoleUsage",
    "RunBudget",
    "Spent",
    "ToolCall",
    "UnknownModelError",
    "UnknownNameError",
    "Usage",
    "UsageLedger",
    "ask",
    "ask_json",
    "assistant_message",
    "budget_in_this_task",
    "call_stats",
    "current_budget",
    "default_cache_dir",
    "endpoint_limit",
    "first_problem",
    "get_client",
    "hash_inline_images",
    "image_data_url",
    "load_model_registry",
    "make_sdk_client",
    "model_calls_now",
    "parse_json_reply",
    "reply_cap",
    "request_key",
    "reset_call_stats",
    "set_cross_process_limiter",
    "shared_clients",
    "system_message",
    "use_budget",
    "user_message",
]
