"""Running a sweep so that the first SIGTERM or SIGINT stops it within a bounded time.

Prefect's flow engine installs its own SIGTERM handler in the main thread, which raises an
exception into whatever code runs when the signal lands: one coroutine of many may swallow it,
and `asyncio.run` then waits on every task and thread before it returns (a run once ignored a
`timeout` for ten minutes). So the sweep runs on an event loop in a worker thread — where no
library can take the signals — and the main thread only waits and listens:

1. on the first SIGTERM/SIGINT it cancels the sweep: no new stage starts, rollouts in flight end
   as `cancelled` with their partial trajectories saved, Prefect marks the runs it was running
   as crashed (its state stays consistent), and the browser is closed;
2. if that has not finished within `grace_s`, the process tree (Chromium, the Playwright driver,
   Prefect's local server) is killed and the process exits at once — all but the command's watcher
   (`_orphans`), which then ends whatever that kill missed.

Either way the caller gets `Stopped` (or the process ends) well inside `STOP_BUDGET_S`:
`GRACE_S` (10 s) for the clean stop, then the kill, which takes well under a second; change the
bound by changing `GRACE_S`.

A signal may also come while `aui run`/`aui sweep` is still starting (importing, reading its
config): the command's entry point (`aui._entry`) calls `listen_from_startup` before it imports
anything heavy, so such a process ends at once, "not started", with the same kind of line, until
the run's `SignalListener` takes over. This module imports only light standard-library modules at
its top (`_orphans` too; asyncio loads when a run starts). Only a signal in the interpreter's own start-up,
before the entry point runs (some tens of milliseconds), still ends the process silently.
"""

import contextlib
import os
import signal
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

from ._orphans import send, watcher_pid

STOP_BUDGET_S = 15.0
"""How long a run may take to stop after the first SIGTERM/SIGINT (README, "Reliability")."""
GRACE_S = 10.0
"""Of that, how long the cancelled sweep gets to finish cleanly before the process tree is killed."""
BROWSER_CLOSE_S = 4.0
SIGNAL_EXIT_CODES = {signal.SIGTERM: 143, signal.SIGINT: 130}


class Stopped(Exception):
    """The run was stopped by a signal; finished stages are kept (cached) and a re-run resumes."""

    def __init__(self, signum: int, seconds: float, clean: bool):
        self.signum, self.seconds, self.clean = signum, seconds, clean
        self.exit_code = SIGNAL_EXIT_CODES.get(signum, 1)
        how = "stopped cleanly" if clean else "stopped (the process tree was killed)"
        super().__init__(f"{signal.Signals(signum).name} received: {how} in {seconds:.1f} s")


class SignalListener:
    """Records SIGTERM/SIGINT from when it is entered (instead of dying at once), so that a run can stop cleanly."""

    def __init__(self) -> None:
        self.signum: int | None = None  # the first signal received
        self.first_at: float | None = None
        self._previous: dict[int, Any] = {}

    def __enter__(self) -> "SignalListener":
        for signum in SIGNAL_EXIT_CODES:
            previous = signal.signal(signum, self._record)
            # Taking over from `listen_from_startup`: once this listener is done, the signal's
            # handling before that (not "stop while starting") comes back.
            self._previous[signum] = _before_startup.get(signum, previous) if previous is _stop_while_starting else previous
        return self

    def __exit__(self, *exc: object) -> None:
        for signum, handler in self._previous.items():
            signal.signal(signum, handler)

    def _record(self, signum: int, frame: object) -> None:
        if self.first_at is None:
            self.signum, self.first_at = signum, time.monotonic()

    def stopped(self, clean: bool = True) -> Stopped | None:
        """A `Stopped` for the first signal, if one arrived."""
        if self.first_at is None:
            return None
        return Stopped(self.signum, time.monotonic() - self.first_at, clean)


_before_startup: dict[int, Any] = {}


def listen_from_startup(command: str) -> None:
    """From now until a run's `SignalListener` takes over, the first SIGTERM/SIGINT ends the
    process at once with one line: nothing has run yet (no stage, no browser, no Prefect server).

    Called first thing by the `aui run`/`aui sweep` entry point (`command` names it in the line),
    before the CLI's imports (about a second) and its checks of the config, where a signal would
    otherwise kill the process with no word or wait for the imports to finish.
    """
    global _startup_command
    _startup_command = command
    for signum in SIGNAL_EXIT_CODES:
        previous = signal.signal(signum, _stop_while_starting)
        if previous is not _stop_while_starting:
            _before_startup[signum] = previous


_startup_command = "run"


def _stop_while_starting(signum: int, frame: object) -> None:
    name = signal.Signals(signum).name
    line = (f"error: aui {_startup_command} not started: {name} received while it was starting up; nothing ran: "
            f"run the same command again to resume\n")
    try:
        os.write(2, line.encode())
    finally:
        os._exit(SIGNAL_EXIT_CODES[signum])


def run_stoppable(main: Callable[[], Awaitable[Any]], listener: SignalListener, *, grace_s: float = GRACE_S,
                  on_hard_stop: Callable[[str], None] | None = None) -> Any:
    """`main()`'s result, run on an event loop in a worker thread while this (main) thread, inside
    `listener`, waits for it and for signals.

    Raises:
        Stopped: a SIGTERM or SIGINT arrived (before or during the run) and the run ended cleanly
            within `grace_s` of it.
        Whatever `main()` raises.
    Never returns after a signal whose run did not end within `grace_s`: the process tree is killed
    and the process exits (after `on_hard_stop(message)`, e.g. to print one line).
    """
    import asyncio
    import threading

    _temporary_server_in_own_session()
    box: dict[str, Any] = {}

    async def runner() -> Any:
        box["loop"], box["task"] = asyncio.get_running_loop(), asyncio.current_task()
        try:
            return await main()
        finally:
            await _close_browser()

    def thread_main() -> None:
        try:
            box["result"] = asyncio.run(runner())
        except BaseException as exc:  # handed to the main thread as it is
            box["error"] = exc

    worker = threading.Thread(target=thread_main, name="aui-run", daemon=True)
    worker.start()
    cancel_sent = False
    while worker.is_alive():
        worker.join(0.1)
        if listener.first_at is None:
            continue
        if not cancel_sent and "task" in box:  # the loop may start after the signal: cancel once it exists
            cancel_sent = True
            box["loop"].call_soon_threadsafe(box["task"].cancel)
        if time.monotonic() - listener.first_at > grace_s:
            _hard_stop(listener.stopped(clean=False), on_hard_stop)
    stopped = listener.stopped()
    if stopped is not None:
        raise stopped
    if "error" in box:
        raise box["error"]
    return box["result"]


def _temporary_server_in_own_session() -> None:
    """Prefect's temporary server (no PREFECT_API_URL), started in a session of its own when the run first needs it.

    A terminal's Ctrl-C is a SIGINT to its whole foreground process group. Prefect starts its temporary server in
    `aui`'s group, so that server died with the first Ctrl-C while the stopping run still had to report its task runs
    to it: the clean stop hung until the grace ran out and the process tree was killed, after a screenful of Prefect's
    "EventsWorker failed to process item". In a session of its own the server hears no terminal signal; Prefect
    stops it at exit as before (a hard stop kills it with the process tree). As Prefect's test harness does, it is
    registered as the process's default server, the one every Prefect client asks for.
    """
    if os.environ.get("PREFECT_API_URL"):
        return
    import subprocess

    import prefect
    from prefect.server.api.server import SubprocessASGIServer
    from prefect.settings import get_current_settings

    class OwnSessionServer(SubprocessASGIServer):
        def _run_uvicorn_command(self) -> subprocess.Popen:
            # Prefect 3.8.8's command and environment (`SubprocessASGIServer._run_uvicorn_command`), in a new session
            return subprocess.Popen(
                [sys.executable, "-m", "uvicorn", "--app-dir", str(prefect.__module_path__.parent), "--factory",
                 "prefect.server.api.server:create_app", "--host", "127.0.0.1", "--port", str(self.port),
                 "--log-level", "error", "--lifespan", "on"],
                env={**os.environ, "PREFECT_UI_ENABLED": "0", "PREFECT__SERVER_EPHEMERAL": "1",
                     "PREFECT__SERVER_FINAL": "1", **get_current_settings().to_environment_variables(exclude_unset=True)},
                start_new_session=True)

    current = SubprocessASGIServer._instances.get(None)
    if current is None or not current.running:
        server = object.__new__(OwnSessionServer)  # not `OwnSessionServer()`: that returns the registered one
        server.__init__(None)
        SubprocessASGIServer._instances[None] = server


async def _close_browser() -> None:
    import asyncio

    # a stop must not wait on a browser that will not close: the tree is killed later
    with contextlib.suppress(BaseException):
        from cua import close_browser  # lazily: this module loads before anything heavy (see above)

        await asyncio.wait_for(asyncio.shield(close_browser()), BROWSER_CLOSE_S)


def _hard_stop(stopped: Stopped, on_hard_stop: Callable[[str], None] | None) -> None:
    """Kill every process this one started (Chromium, the Playwright driver, Prefect's server) but its watcher,
    and exit now."""
    from cua import process_descendants  # lazily: this module loads before anything heavy (see above)

    if on_hard_stop is not None:
        on_hard_stop(str(stopped))
    sys.stdout.flush()
    sys.stderr.flush()
    # the watcher is spared: once this process is gone it ends whatever this kill missed, then itself
    send([pid for pid in process_descendants(os.getpid()) if pid != watcher_pid()], signal.SIGKILL)
    os._exit(stopped.exit_code)
