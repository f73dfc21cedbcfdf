"""Fixtures for the coder tests: a small app spec, and the real client on a scripted server."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from apps_prompts import AppPrompt, AppSpec, Domain, Task
from llm import ModelClient, RetryPolicy
from llm.testing import ScriptedOpenAIServer, scripted_registry

FAST_RETRY = RetryPolicy(backoff_base_s=0.01, backoff_max_s=0.05, retry_after_cap_s=1.0)


def page(body: str, style: str = "", script: str = "") -> str:
    """A complete single-file app."""
    return (f"<!DOCTYPE html>\n<html><head><meta charset='utf-8'><style>{style}</style></head>"
            f"<body>{body}<script>{script}</script></body></html>\n")


@pytest.fixture
def counter_app() -> AppSpec:
    return AppSpec(
        id="counter",
        title="Counter",
        domain=Domain.utility,
        prompt=AppPrompt(name="Counter", goal="Count things.", features=["Increment", "Reset"], theme="Plain"),
        tasks=[Task(id="count-to-three", description="Count to three.", expected_outcome="The count shows 3.",
                    checker="return document.querySelector('#count').textContent === '3';")],
    )


@pytest.fixture
def counter_html() -> str:
    return page(
        "<p id='count'>0</p><button id='inc'>+1</button><button id='reset'>Reset</button>",
        script="function increment() { const c = document.getElementById('count'); c.textContent = Number(c.textContent) + 1; }\n"
               "const reset = () => { document.getElementById('count').textContent = '0'; };\n"
               "document.getElementById('inc').onclick = increment; document.getElementById('reset').onclick = reset;",
    )


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("AUI_CACHE_DIR", str(tmp_path / "aui-cache"))


@pytest.fixture
def scripted() -> Iterator[Callable[..., tuple[ScriptedOpenAIServer, ModelClient]]]:
    """`scripted(replies)` → (server, client): the real openai client against a local server."""
    servers: list[ScriptedOpenAIServer] = []

    def make(script, **fields) -> tuple[ScriptedOpenAIServer, ModelClient]:
        server = ScriptedOpenAIServer(script).start()
        servers.append(server)
        client = ModelClient(scripted_registry(server, **fields), cache=False, retry=FAST_RETRY)
        return server, client

    yield make
    for server in servers:
        server.close()
