"""Where the `aui` commands write: the console, the error console, and the one-line `error:` exit."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Awaitable, Coroutine, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import typer
from rich.console import Console
from rich.markup import escape

from cua import close_browser
from llm import ModelConfigError, UnknownNameError

T = TypeVar("T")

console = Console()
if not console.is_terminal:  # piped or logged: keep table rows on one line
    console = Console(width=200)
err_console = Console(stderr=True)


def read_html(path: Path, flag: str = "--html") -> str:
    """The app file a flag named, as text; one `error:` line naming the flag and the file when it is missing or
    not UTF-8."""
    if not Path(path).is_file():
        raise _fail(f"{flag}: no file at {path}")
    try:
        return Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise _fail(f"{flag} {path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None


def check_port_free(host: str, port: int) -> None:
    """One `error:` line when nothing can listen on `host:port` (taken, or no such host): the servers behind `aui view`
    and `aui ui` would print their own message and exit with 3 or 0."""
    try:
        family, kind, _, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]  # IPv6 too
        with socket.socket(family, kind) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds: a port in TIME_WAIT is free
            probe.bind(address)
    except socket.gaierror as exc:
        raise _fail(f"--host {host}: {exc.strerror or exc}") from None
    except OSError as exc:
        raise _fail(f"--port {port}: cannot listen on {host}:{port}: {exc.strerror or exc}") from None


def _fail(message: str, code: int = 2) -> typer.Exit:
    """Print `error: message` as one line on stderr; the exit to raise (2: bad input, 1: the run failed)."""
    line = " ".join(str(message).split())  # one line, whatever the exception's text held
    err_console.print(f"[red]error:[/] {escape(line)}", soft_wrap=True)
    return typer.Exit(code)


def failed(exc: Exception, offline: str | None = None) -> typer.Exit:
    """`_fail(exc's message)`. `offline` (e.g. `--judge offline`): where a model cannot be used (an unknown name, an
    unset key variable), the line also says how to run the command without one."""
    hint = f" ({offline} needs no model)" if offline and isinstance(exc, (ModelConfigError, UnknownNameError)) else ""
    text = exc.args[0] if isinstance(exc, KeyError) and len(exc.args) == 1 else exc  # str(KeyError) adds quotes
    return _fail(f"{text}{hint}")


@contextmanager
def exit_on(*kinds: type[Exception], offline: str | None = None) -> Iterator[None]:
    """Inside the block, an exception of these kinds ends the command as `failed(it, offline)`: one line, exit 2."""
    try:
        yield
    except kinds as exc:
        raise failed(exc, offline) from None


async def closing(client: Any, work: Awaitable[T]) -> T:
    """`await work`, closing the model `client` (None: there is none) once it has ended, however it ended."""
    try:
        return await work
    finally:
        if client is not None:
            await client.aclose()


def in_browser(work: Coroutine[Any, Any, T]) -> T:
    """`asyncio.run(work)`, closing this process's browser once it has ended, however it ended."""
    async def then_close_browser() -> T:
        try:
            return await work
        finally:
            await close_browser()

    return asyncio.run(then_close_browser())

