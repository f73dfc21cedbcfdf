"""`aui run`/`aui sweep` handle SIGTERM/SIGINT from their first moment (`aui._entry`, `flows._stop`).

Each case runs in a fresh interpreter: the handlers under test end the process.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _default_signals() -> None:
    # A pytest-xdist worker ignores SIGINT and its children would inherit that; the interpreter under
    # test starts as one from a shell does (then Python installs its own SIGINT handler).
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _python(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=ROOT, capture_output=True, text=True,
                          timeout=60, preexec_fn=_default_signals)


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_a_signal_while_starting_up_ends_the_process_at_once_with_the_resume_line(signum, code):
    done = _python(f"""
        import os, signal, time
        from flows._stop import listen_from_startup
        listen_from_startup("sweep")
        os.kill(os.getpid(), {int(signum)})
        time.sleep(5)
        print("still running")
    """)
    assert done.returncode == code, done
    assert done.stdout == ""
    assert done.stderr.splitlines() == [f"error: aui sweep not started: {signum.name} received while it was starting "
                                        "up; nothing ran: run the same command again to resume"]


def test_the_runs_listener_takes_over_and_gives_back_the_handling_from_before_start_up():
    done = _python("""
        import os, signal
        from flows._stop import SignalListener, listen_from_startup
        listen_from_startup("run")
        with SignalListener() as listener:
            os.kill(os.getpid(), signal.SIGTERM)  # recorded, not fatal
            assert listener.stopped() is not None and listener.stopped().exit_code == 143
        assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
        print("ok")
    """)
    assert done.returncode == 0 and done.stdout == "ok\n", done


@pytest.mark.parametrize(("argv", "listens"), [(["run", "--offline"], True), (["sweep", "x.yaml"], True),
                                              (["apps", "list"], False), (["serve", "runs"], False), ([], False)])
def test_only_run_and_sweep_listen_from_start_up(argv, listens):
    """Other commands keep Python's handling (Ctrl-C ends `aui serve`, SIGTERM ends any)."""
    done = _python(f"""
        import signal, sys
        import aui._app
        from aui import _entry
        aui._app.app = lambda: print(signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL)
        sys.argv = ["aui", *{argv!r}]
        _entry.main()
    """)
    assert done.returncode == 0 and done.stdout == f"{listens}\n", done
