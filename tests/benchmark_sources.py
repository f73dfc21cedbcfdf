"""Stand-ins for a benchmark's public source: a small repository made on disk, and a real HTTP server on 127.0.0.1
serving files the way raw.githubusercontent.com does (`/OWNER/REPO/COMMIT/PATH`), well or badly.

    repo = make_repository(tmp_path / "clone")            # examples/alpha.yaml, examples/beta.yaml, LICENSE
    bench = tiny_benchmark(repo)                           # a Benchmark pinning those files' sums
    with BenchmarkServer(repo_files(bench, repo)) as server:
        server.drop_first[path] = 1                        # the first GET of `path` closes half-way through
        server.changed[path] = b"..."                      # serve other bytes for `path`
        fetch_benchmark(bench, to=…, base_url=server.url)
"""

from __future__ import annotations

import hashlib
import socket
import threading
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from apps_prompts import Benchmark

TINY_FILES = {
    "examples/alpha.yaml": "id: alpha\ntitle: Alpha\nprompt: Make a counter with a big plus button.\ntags: [tool]\n",
    "examples/beta.yaml": "id: beta\ntitle: Beta\nprompt: Make a landing page for a bakery.\ntags: [landing]\n",
    "LICENSE": "MIT License\n\nCopyright (c) 2025 Tiny Authors\n",
}
TINY_COMMIT = "0123456789abcdef0123456789abcdef01234567"


def make_repository(folder: Path, files: dict[str, str] = TINY_FILES) -> Path:
    """A folder holding `files` at their repository paths (a clone's layout)."""
    for path, text in files.items():
        (folder / path).parent.mkdir(parents=True, exist_ok=True)
        (folder / path).write_text(text, encoding="utf-8")
    return folder


def tiny_benchmark(repository: Path, files: dict[str, str] = TINY_FILES, name: str = "tiny") -> Benchmark:
    """A Benchmark pinning the sums of `files` as they are in `repository`."""
    sums = {path: hashlib.sha256((repository / path).read_bytes()).hexdigest() for path in files}
    return Benchmark(name=name, repository="github.com/example/tiny", commit=TINY_COMMIT, license="MIT",
                     files=sums, strip="examples/", description="two prompts for tests")


def repo_files(bench: Benchmark, folder: Path, place=None) -> dict[str, bytes]:
    """The server's files: URL path → bytes, read from `folder` (at `place(path)`, default the repository path)."""
    place = place or (lambda path: path)
    return {f"/{bench.owner_repo}/{bench.commit}/{path}": (folder / place(path)).read_bytes()
            for path in bench.files if (folder / place(path)).is_file()}


class BenchmarkServer:
    """A real HTTP/1.1 server on 127.0.0.1 in a thread. `requests` counts GETs per URL path; `drop_first[path] = n`
    makes the first n GETs of `path` send the headers and half the body, then close; `changed[path]` serves other
    bytes (with their true length) for `path`. Paths here are repository paths."""

    def __init__(self, files: dict[str, bytes]):
        self.files = files
        self.requests: Counter[str] = Counter()
        self.drop_first: dict[str, int] = {}
        self.changed: dict[str, bytes] = {}
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> BenchmarkServer:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def count(self, path: str) -> int:
        """GETs so far of the repository path `path` (any owner/commit prefix)."""
        return sum(n for url, n in self.requests.items() if url.endswith("/" + path))

    def _handler(self):
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:  # quiet
                pass

            def do_GET(self) -> None:
                with server._lock:
                    server.requests[self.path] += 1
                    repo_path = next((p for p in (*server.drop_first, *server.changed) if self.path.endswith("/" + p)), None)
                    drop = repo_path is not None and server.drop_first.get(repo_path, 0) > 0
                    if drop:
                        server.drop_first[repo_path] -= 1
                if self.path not in server.files:
                    body = b"404: Not Found"
                    self.send_response(404)
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                    return
                body = server.changed.get(repo_path, server.files[self.path]) if repo_path else server.files[self.path]
                self.send_response(200)
                self.send_header("Content-Type", "text/plain; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if drop:
                    self.wfile.write(body[: len(body) // 2])
                    self.wfile.flush()
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)
                    return
                self.wfile.write(body)

        return Handler


def closed_port() -> int:
    """A port on 127.0.0.1 nothing listens on (bound, then released)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]
