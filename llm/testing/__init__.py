"""A scripted OpenAI-compatible HTTP server for tests: the real `openai` client talks to it.

    with ScriptedOpenAIServer([reply_status(429, retry_after=0.1), reply_text("hi")]) as server:
        registry = scripted_registry(server)
        result = await ModelClient(registry, cache=False).chat([user_message("hello")], role="coder")
        assert server.requests[-1].json["messages"][0]["content"] == "hello"

The script is a list of replies used in order by every request, a dict of lists per API kind
(`"chat"`, `"responses"`), or a callable receiving the `RecordedRequest` and returning a reply.
The server counts requests in flight (`max_in_flight`: the most at once).

`requests` holds every HTTP request, retries included: a client that timed out on a loaded machine
sends the same body again. A test counting what the code asked for counts `distinct_requests()`
(each body once), so it does not fail because the client did its job.

`LatencyOpenAIServer` answers every request after a latency drawn per model (fixed or log-normal
with a mean, `Latency`): the stand-in for a real model's speed in benchmarks of concurrency.
"""

from ._replies import (
    ApiKind,
    RecordedRequest,
    Reply,
    assistant_turns,
    reply_flood,
    reply_hang,
    reply_malformed,
    reply_reset,
    reply_responses,
    reply_status,
    reply_text,
    uitars_click,
    uitars_finished,
    uitars_type,
)
from ._server import Answer, LatencyOpenAIServer, Script, ScriptedOpenAIServer, scripted_model, scripted_registry

__all__ = [
    "Answer",
    "ApiKind",
    "LatencyOpenAIServer",
    "RecordedRequest",
    "Reply",
    "Script",
    "ScriptedOpenAIServer",
    "assistant_turns",
    "reply_flood",
    "reply_hang",
    "reply_malformed",
    "reply_reset",
    "reply_responses",
    "reply_status",
    "reply_text",
    "scripted_model",
    "scripted_registry",
    "uitars_click",
    "uitars_finished",
    "uitars_type",
]
