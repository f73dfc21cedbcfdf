"""The scripted OpenAI-protocol server: a real HTTP server on 127.0.0.1 answering from a script, and one
that answers after a model's latency."""

from __future__ import annotations

import hashlib
import json
import random
import socket
import struct
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from .._config import ROLES, ModelConfig, ModelParams, Prices
from .._latency import Latency
from .._registry import ModelRegistry
from ._replies import ApiKind, RecordedRequest, Reply, kind_of_path, reply_hang, reply_status, reply_text

Script = Sequence[Reply] | Mapping[str, Sequence[Reply]] | Callable[[RecordedRequest], Reply]


class ScriptedOpenAIServer:
    """A real HTTP server on 127.0.0.1 (a free port unless `port` is given; background thread) answering from a script.

    Paths: `POST .../chat/completions` (also Azure's `/openai/deployments/{name}/chat/completions`)
    and `POST .../responses`. When a list script runs out, `default` is sent if given, otherwise a
    500 that says so. Use as a context manager, or call `start()` / `close()`.
    """

    def __init__(self, script: Script = (), *, default: Reply | None = None, port: int = 0) -> None:
        self._lock = threading.Lock()
        self._closing = threading.Event()
        self._callable = script if callable(script) else None
        self._queues: dict[str, list[Reply]] = {}
        if isinstance(script, Mapping):
            self._queues = {kind: list(replies) for kind, replies in script.items()}
        elif self._callable is None:
            self._queues = {"*": list(script)}
        self.default = default
        self.requests: list[RecordedRequest] = []
        self.in_flight = 0
        """Requests received and not yet answered."""
        self.max_in_flight = 0
        """The most requests ever in flight at once."""
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._port: int | None = None
        self._wanted_port = port

    @property
    def port(self) -> int:
        """The listening port (still readable after `close()`, for asserting on error messages)."""
        if self._port is None:
            raise RuntimeError("ScriptedOpenAIServer is not started; use it as a context manager or call start()")
        return self._port

    @property
    def base_url(self) -> str:
        """The `base_url` for an OpenAI client: `http://127.0.0.1:PORT/v1`."""
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def azure_endpoint(self) -> str:
        """The `azure_endpoint` for an Azure client: `http://127.0.0.1:PORT`."""
        return f"http://127.0.0.1:{self.port}"

    def add(self, *replies: Reply, kind: str = "*") -> None:
        """Append replies to the script (to the per-kind list `kind` for dict scripts)."""
        with self._lock:
            self._queues.setdefault(kind, []).extend(replies)

    def requests_for(self, kind: ApiKind) -> list[RecordedRequest]:
        with self._lock:
            return [r for r in self.requests if r.kind == kind]

    def distinct_requests(self, kind: ApiKind | None = None) -> list[RecordedRequest]:
        """The requests received (of `kind`, if given), each body once, in the order they first came: the calls
        the code made, whatever the client retried. Two calls meant to send the same body count once too:
        count `requests` where that matters."""
        distinct: dict[str, RecordedRequest] = {}
        with self._lock:
            for request in self.requests:
                if kind is None or request.kind == kind:
                    distinct.setdefault(request.body_sha256, request)
        return list(distinct.values())

    def start(self) -> ScriptedOpenAIServer:
        server = _Server(("127.0.0.1", self._wanted_port), type("Handler", (_Handler,), {"owner": self}))
        self._server = server
        self._port = server.server_address[1]
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.05}, name="scripted-openai", daemon=True
        )
        self._thread.start()
        return self

    def close(self) -> None:
        self._closing.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> ScriptedOpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _next_reply(self, request: RecordedRequest) -> Reply:
        if self._callable is not None:
            return self._callable(request)
        with self._lock:
            for key in (request.kind, "*"):
                queue = self._queues.get(key)
                if queue:
                    return queue.pop(0)
        if self.default is not None:
            return self.default
        return reply_status(500, message=f"ScriptedOpenAIServer: script exhausted at request {len(self.requests)}")


def scripted_model(server: ScriptedOpenAIServer, name: str = "scripted", **fields: Any) -> ModelConfig:
    """An `openai-compatible` model entry pointing at `server` (fields override the defaults)."""
    defaults: dict[str, Any] = {
        "name": name,
        "provider": "openai-compatible",
        "model": "scripted-model",
        "base_url": server.base_url,
        "api_key": "sk-scripted",
        # The server answers at once, but a loaded machine's event loop (Chromium proving checkers beside the call)
        # can read that answer seconds late; a test of time limits sets its own.
        "timeout_s": 120.0,
        "max_retries": 2,
        "params": ModelParams(),
        "prices": Prices(input_usd_per_1m=1.0, output_usd_per_1m=2.0),
    }
    return ModelConfig(**{**defaults, **fields})


def scripted_registry(server: ScriptedOpenAIServer, **fields: Any) -> ModelRegistry:
    """A registry with one `scripted` model at `server`, an `offline` model, and every role on `scripted`."""
    offline = ModelConfig(name="offline", provider="offline")
    return ModelRegistry([scripted_model(server, **fields), offline], {role: "scripted" for role in ROLES})


class _Server(ThreadingHTTPServer):
    # The default backlog of 5 makes a burst of concurrent test calls wait on SYN retransmits.
    request_queue_size = 128
    daemon_threads = True


class _Handler(BaseHTTPRequestHandler):
    """Records each request on its server (`owner`) and answers it from that server's script."""

    owner: ScriptedOpenAIServer  # set per server by `start`, on a subclass of its own

    # HTTP/1.0: one request per connection, so a reset or hang never poisons a pooled socket.
    protocol_version = "HTTP/1.0"

    def do_POST(self) -> None:  # noqa: N802 (http.server naming)
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            parsed = json.loads(raw) if raw else None
        except ValueError:
            parsed = None
        request = RecordedRequest(
            method="POST",
            path=self.path,
            headers={k.lower(): v for k, v in self.headers.items()},
            json=parsed,
            kind=kind_of_path(self.path),
            body_sha256=hashlib.sha256(raw).hexdigest(),
        )
        with self.owner._lock:
            self.owner.requests.append(request)
            self.owner.in_flight += 1
            self.owner.max_in_flight = max(self.owner.max_in_flight, self.owner.in_flight)
        try:
            self._send(reply_status(404, message=f"ScriptedOpenAIServer: no route for {self.path}")
                       if request.kind == "other" else self.owner._next_reply(request), request)
        finally:
            with self.owner._lock:
                self.owner.in_flight -= 1

    def _send(self, reply: Reply, request: RecordedRequest) -> None:
        try:
            if reply.action == "hang":
                if self.owner._closing.wait(reply.hang_s):
                    return
                reply = reply.then or reply_text("late reply")
            if reply.action == "flood":
                self._flood(reply, request)
                return
            if reply.action == "reset":
                # SO_LINGER with a zero timeout makes close() send RST instead of FIN.
                self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                self.connection.close()
                self.close_connection = True
                return
            body = reply.body(request) if callable(reply.body) else reply.body
            data = body if isinstance(body, bytes) else json.dumps(body if body is not None else {}).encode()
            self.send_response(reply.status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in reply.headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError, OSError):
            pass  # the client gave up (timed out) before we answered

    def _flood(self, reply: Reply, request: RecordedRequest) -> None:
        # No Content-Length under HTTP/1.0: the body ends only when the connection closes.
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(b'{"choices": [{"index": 0, "message": {"role": "assistant", "content": "')
        chunk = b"x" * reply.chunk_bytes
        deadline = time.monotonic() + reply.hang_s
        while time.monotonic() < deadline and not self.owner._closing.is_set():
            self.wfile.write(chunk)  # raises once the client has hung up; _send catches it
            self.wfile.flush()
            request.bytes_sent += len(chunk)
            time.sleep(0.01)

    def do_GET(self) -> None:  # noqa: N802
        self._send(reply_status(404, message="ScriptedOpenAIServer only answers POST"), RecordedRequest(
            "GET", self.path, {}, None, "other"))

    def log_message(self, format: str, *args: Any) -> None:
        pass  # keep test output clean


# ---- a model server with latency -----------------------------------------------------------------

Answer = Callable[[RecordedRequest], Reply]


class LatencyOpenAIServer(ScriptedOpenAIServer):
    """A `ScriptedOpenAIServer` that answers every request after a latency drawn per model.

    `answer(request)` makes the reply (any role: see `flows.testing.LatencyRoles` for one that plays
    the loop's roles on real apps); `latency` is one `Latency` for every request, or a mapping from
    the requested model id (the body's `model`, i.e. a registry entry's `model:`) to its latency,
    with `"*"` for the rest. Draws are seeded, so a benchmark's latencies repeat. Each recorded
    request keeps the latency it got (`delay_s`).

        server = LatencyOpenAIServer(answer, {"cua-1s": Latency.fixed(1.0), "*": Latency.lognormal(10)})
    """

    def __init__(self, answer: Answer, latency: Latency | Mapping[str, Latency], *, seed: int = 0,
                 port: int = 0) -> None:
        super().__init__(self._answer_late, port=port)
        self.answer = answer
        self.latencies = {"*": Latency.fixed(0.0), **({"*": latency} if isinstance(latency, Latency) else latency)}
        self._rng = random.Random(seed)

    def latency_for(self, request: RecordedRequest) -> Latency:
        model = (request.json or {}).get("model") if isinstance(request.json, dict) else None
        return self.latencies.get(str(model), self.latencies["*"])

    def _answer_late(self, request: RecordedRequest) -> Reply:
        reply = self.answer(request)
        with self._lock:
            delay = self.latency_for(request).sample(self._rng)
        request.delay_s = delay
        return reply_hang(delay, then=reply) if delay > 0 else reply
