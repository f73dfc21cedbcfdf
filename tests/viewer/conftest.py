"""A real run folder made by the offline loop, and the viewer serving it on a free port."""

from __future__ import annotations

import shutil
import socket
import threading
import time
from pathlib import Path

import pytest

APP = "unit-converter"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="session")
async def offline_run(tmp_path_factory) -> Path:
    """One bundled app, v0 and one offline revision (rounds 0 and 1), heuristic agent, failed rollouts traced."""
    from experiment import make_config
    from flows import sweep_without_prefect
    from tests.built_once import built_once

    async def build(out: Path) -> None:
        config = make_config({"name": "viewer-run", "app_ids": [APP], "rounds": 1, "out_dir": str(out), "max_steps": 10,
                              "trace": "failures"})
        await sweep_without_prefect(config)

    return await built_once(tmp_path_factory, "viewer-runs", build) / "viewer-run"


class Served:
    """The viewer app served by uvicorn in a thread (its own event loop), stopped at the end."""

    def __init__(self, roots: list[Path], who: str = "ada", blind: bool = True):
        import uvicorn

        from viewer import create_app

        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.server = uvicorn.Server(uvicorn.Config(create_app(roots, who=who, blind=blind), host="127.0.0.1",
                                                    port=self.port, log_level="warning"))
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        deadline = time.monotonic() + 30
        while not self.server.started:
            assert time.monotonic() < deadline, "the viewer did not start within 30 s"
            time.sleep(0.05)

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)


@pytest.fixture(scope="session")
def viewer_roots(offline_run, tmp_path_factory) -> dict[str, Path]:
    """The offline run and two damaged copies of it beside it, under one folder of runs."""
    runs = tmp_path_factory.mktemp("viewer-served")
    good = runs / "viewer-run"
    shutil.copytree(offline_run, good)
    damaged = runs / "damaged-run"
    shutil.copytree(offline_run, damaged)
    broken = runs / "broken-results"
    shutil.copytree(offline_run, broken)
    text = (broken / "results.json").read_text()
    (broken / "results.json").write_text(text[: len(text) // 2])  # cut off mid-write
    return {"runs": runs, "good": good, "damaged": damaged, "broken": broken}


@pytest.fixture(scope="session")
def served(viewer_roots):
    server = Served([viewer_roots["runs"]])
    yield server
    server.stop()


@pytest.fixture(scope="session")
async def viewer_browser():
    from playwright.async_api import async_playwright

    from cua import BrowserConfig

    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=BrowserConfig().executable_path,
                                                   args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"])
        yield browser
        await browser.close()


@pytest.fixture()
async def browser_page(viewer_browser):
    context = await viewer_browser.new_context(viewport={"width": 1400, "height": 900})
    page = await context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.errors = errors
    yield page
    await context.close()
    assert errors == [], f"the page's script failed: {errors}"
