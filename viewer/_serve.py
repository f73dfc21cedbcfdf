"""Serving the viewer on this machine (uvicorn, 127.0.0.1 by default: labels are the only write, but still)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

DEFAULT_PORT = 8765


def serve_viewer(roots: list[Path], who: str, host: str = "127.0.0.1", port: int = DEFAULT_PORT, blind: bool = True,
                 on_ready: Callable[[str], None] | None = None) -> None:
    """Serve until interrupted; `on_ready(url)` is called once the socket listens."""
    import uvicorn

    from ._app import create_app

    app = create_app(roots, who=who, blind=blind)
    config = uvicorn.Config(app, host=host, port=port, log_level="warning", access_log=False)
    server = uvicorn.Server(config)
    if on_ready is not None:
        original = server.startup

        async def startup(sockets=None):
            await original(sockets)
            if server.started:
                on_ready(f"http://{host}:{port}/")

        server.startup = startup
    server.run()
