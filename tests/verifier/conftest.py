"""A small app of our own with reference solutions, for the gate and the LLM verifier tests."""

from __future__ import annotations

import pytest

from apps_prompts import AppSpec, Task
from verifier.testing import REPAIR_MARK, is_repair, reference_entry, request_text  # noqa: F401  (the tests' helpers, shared with bench/)

COUNTER_HTML = """<!doctype html>
<html><head><title>Counter</title></head>
<body>
  <h1 id="title">Counter</h1>
  <p id="count">0</p>
  <button id="inc">Add one</button>
  <label>Name <input id="name" placeholder="Your name"></label>
  <button id="save">Save</button>
  <p id="greeting"></p>
  <script>
    window.appState = {score: 0};
    document.getElementById('inc').addEventListener('click', () => {
      appState.score += 1;
      document.getElementById('count').textContent = String(appState.score);
    });
    document.getElementById('save').addEventListener('click', () => {
      document.getElementById('greeting').textContent = 'Hello, ' + document.getElementById('name').value + '!';
    });
  </script>
</body></html>
"""


@pytest.fixture
def counter_html() -> str:
    return COUNTER_HTML


@pytest.fixture
def counter_spec() -> AppSpec:
    return AppSpec(
        id="counter",
        title="Counter",
        domain="utility",
        prompt="A counter with a greeting box.",
        tasks=[
            Task(
                id="add-three",
                description="Add one to the counter three times.",
                expected_outcome="The count reads 3.",
                checker="#count == 3",
                solution=[{"action": "click", "selector": "#inc"}] * 3,
            ),
            Task(
                id="greet-ada",
                description="Save the name Ada.",
                expected_outcome="The greeting reads 'Hello, Ada!'.",
                checker="return document.querySelector('#greeting')?.textContent === 'Hello, Ada!';",
                solution=[
                    {"action": "fill", "selector": "#name", "value": "Ada"},
                    {"action": "click", "selector": "#save"},
                ],
            ),
            Task(
                id="reset",
                description="Reset the counter to zero.",
                expected_outcome="The count reads 0 after a reset.",
            ),
        ],
    )

