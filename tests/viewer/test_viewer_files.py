"""The viewer serves files of its run folders and nothing else, whatever the request path says."""

from __future__ import annotations

import socket

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
    assert status in (400, 404), (path, status)
    assert b"root:" not in body


def test_a_file_inside_the_run_folder_is_served(served, viewer_roots):
    status, body = _raw_get(served.port, f"/files/{RUN}/results.json")
    assert status == 200 and body.lstrip().startswith(b"{")


def test_files_of_kinds_a_run_does_not_show_are_not_served(served, viewer_roots):
    (viewer_roots["good"] / "secret.key").write_text("not for the viewer")
    status, body = _raw_get(served.port, f"/files/{RUN}/secret.key")
    assert status == 404 and b"not for the viewer" not in body
