"""The `aui` command's entry point (`[project.scripts]`): it listens for SIGTERM/SIGINT first.

`aui run`/`aui sweep` stop on the first SIGTERM or SIGINT with one line saying how to resume
(`flows.listen_from_startup`). Importing the CLI takes about a second (Prefect, OpenAI, Playwright) and the
config is read after that; a signal landing then would otherwise kill the process with no word.
So, for those two commands, a handler that ends the process at once with that line is installed
before anything heavy is imported (this module, `aui`'s and `flows`' lazy `__init__` and `flows._stop`
import only light modules of the standard library: no asyncio, no third-party package; a few
milliseconds), until the run's listener takes over. Other commands keep Python's default handling (Ctrl-C ends them).

Then, for every command, before anything starts a process: a watcher that ends whatever the command
started once the command has ended, however (a `kill -9` too: `flows.watch_this_process`).
"""

from __future__ import annotations

import sys

STOPPABLE_COMMANDS = ("run", "sweep")


def main() -> None:
    """`aui …`."""
    if sys.argv[1:2] and sys.argv[1] in STOPPABLE_COMMANDS:
        from flows import listen_from_startup  # first of all, so a stop signal is heard while the rest loads

        listen_from_startup(sys.argv[1])
    from flows import watch_this_process  # before Prefect's server, the browser or a pool starts (light, as above)

    watch_this_process()
    try:
        from ._app import app

        app()
    except ValueError as exc:  # a setting read when a module loads (AUI_STAGE_RETRY_DELAYS_S): one line, no traceback
        if not str(exc).startswith("AUI_"):
            raise
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(2)
    except OSError as exc:  # a path given that cannot be used as given (a file where a folder goes, no parent, …)
        if exc.filename is None:
            raise
        print(f"error: {exc.filename}: {exc.strerror or exc}", file=sys.stderr)
        sys.exit(2)
