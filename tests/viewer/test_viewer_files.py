"""The viewer serves files of its run folders and nothing else, whatever the request path says; `aui view`
serves it on 127.0.0.1 and says where."""

from __future__ import annotations

import os
import re
import select
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from viewer import ViewerSettings  # noqa: F401  (the public names load)

RUN = "viewer-run"


def _raw_get(base_port: int, path: str) -> tuple[int, bytes]:
    """A GET with the path sent exactly as written (no client normalises `..` or decodes `%2e` first)."""
    with socket.create_connection(("127.0.0.1", base_port), timeout=10) as sock:
        sock.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode("latin-1"))
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split()[1]), body


@pytest.mark.parametrize("path", [
    f"/files/{RUN}/../../../../etc/passwd",
    f"/files/{RUN}/..%2f..%2f..%2f..%2fetc%2fpasswd",
    f"/files/{RUN}/%2e%2e/%2e%2e/%2e%2e/%2e%2e/etc/passwd",
    f"/files/{RUN}/%252e%252e/%252e%252e/etc/passwd",
    f"/files/{RUN}/..%5c..%5c..%5cetc%5cpasswd",
    f"/files/{RUN}//etc/passwd",
    f"/files/{RUN}/%2fetc%2fpasswd",
    f"/files/{RUN}/apps/%00/etc/passwd",
    "/files/../../../../etc/passwd",
    "/files/%2e%2e/etc/passwd",
    "/static/../../../../etc/passwd",
    "/static/%2e%2e/%2e%2e/%2e%2e/etc/passwd",
    f"/runs/{RUN}/t/../../../../etc/passwd",
    f"/files/{RUN}/escape/passwd",
])
def test_a_path_outside_the_run_folders_is_not_found_and_reads_nothing(served, viewer_roots, path):
    escape = viewer_roots["good"] / "escape"
    if not escape.exists():  # a link inside the run folder that points outside it
        escape.symlink_to("/etc", target_is_directory=True)
    status, body = _raw_get(served.port, path)
    assert status == 404, (path, status)
    assert b"root:" not in body


def test_a_file_inside_the_run_folder_is_served(served, viewer_roots):
    status, body = _raw_get(served.port, f"/files/{RUN}/results.json")
    assert status == 200 and body.lstrip().startswith(b"{")


def test_files_of_kinds_a_run_does_not_show_are_not_served(served, viewer_roots):
    (viewer_roots["good"] / "secret.key").write_text("not for the viewer")
    status, body = _raw_get(served.port, f"/files/{RUN}/secret.key")
    assert status == 404 and b"not for the viewer" not in body


def test_aui_view_prints_its_url_on_127_0_0_1_and_serves_the_runs_page(offline_run, tmp_path):
    """The command as a user types it (a subprocess): the URL line, then the runs page at that URL."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    aui = Path(sys.executable).parent / "aui"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "AUI_"))}
    viewer = subprocess.Popen([str(aui), "view", str(offline_run), "--port", str(port), "--who", "ada"], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        printed = ""
        deadline = time.monotonic() + 120  # a bound on a failure, not a measured time
        while "http://" not in printed and time.monotonic() < deadline and viewer.poll() is None:
            if select.select([viewer.stdout], [], [], 1.0)[0]:
                printed += viewer.stdout.readline()
        urls = re.findall(r"http://[^\s)]+", printed)
        assert urls == [f"http://127.0.0.1:{port}/"], (printed, viewer.poll())
        with urllib.request.urlopen(urls[0], timeout=30) as response:
            assert response.status == 200
            page = response.read().decode()
        assert f'data-run="{RUN}"' in page and "No model calls" in page  # the runs page, listing the run
    finally:
        viewer.send_signal(signal.SIGINT)  # Ctrl-C, as a user stops it
        try:
            viewer.wait(timeout=30)
        except subprocess.TimeoutExpired:
            viewer.kill()
            viewer.wait()
        viewer.stdout.close()
        viewer.stderr.close()
