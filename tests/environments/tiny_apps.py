"""Small app specs written to a folder, for the room's tests (a spec folder as `aui run --apps` reads)."""

from __future__ import annotations

from pathlib import Path

import yaml

COUNTER_HTML = """<!doctype html><html><head><title>Counter {tag}</title></head><body style="margin:0;font:16px sans-serif">
<button id="add" style="position:absolute;left:40px;top:40px;width:160px;height:50px">Add one</button>
<p id="count" style="position:absolute;left:40px;top:120px">0</p>
<input id="name" style="position:absolute;left:40px;top:180px;width:200px" placeholder="Name">
<p id="luck" style="position:absolute;left:40px;top:240px"></p>
<script>
let count = 0;
document.querySelector('#luck').textContent = 'lucky ' + Math.floor(Math.random() * 1e9);
document.querySelector('#add').onclick = () => {{ count += 1; document.querySelector('#count').textContent = String(count); }};
</script></body></html>"""

TASKS = [
    {"id": "add-two", "description": "Add two to the counter.", "expected_outcome": "The count reads 2.",
     "checker": "return document.querySelector('#count').textContent === '2'",
     "solution": [{"action": "click", "selector": "#add"}, {"action": "click", "selector": "#add"}]},
    {"id": "name-ada", "description": "Type the name Ada.", "expected_outcome": "The name field holds Ada.",
     "checker": "return document.querySelector('#name').value === 'Ada'",
     "solution": [{"action": "fill", "selector": "#name", "value": "Ada"}]},
    # true at load: the gate refuses it, so it is never offered
    {"id": "always-true", "description": "Nothing to do.", "expected_outcome": "Nothing.",
     "checker": "return true", "solution": [{"action": "click", "selector": "#add"}]},
    # no reference solution: nothing proves its checker
    {"id": "no-solution", "description": "Add one.", "expected_outcome": "The count reads 1.",
     "checker": "return document.querySelector('#count').textContent === '1'"},
]


def write_counter_app(folder: Path, app_id: str = "counter", tag: str = "") -> Path:
    """`folder/<app_id>/app.yaml` + `index.html` (a counter, a name field and a seeded lucky number); returns `folder`."""
    app = folder / app_id
    app.mkdir(parents=True, exist_ok=True)
    (app / "index.html").write_text(COUNTER_HTML.format(tag=tag or app_id), encoding="utf-8")
    spec = {"id": app_id, "title": "Counter", "domain": "tool", "prompt": "A counter.", "reference_html": "index.html",
            "tasks": TASKS}
    (app / "app.yaml").write_text(yaml.safe_dump(spec, sort_keys=False), encoding="utf-8")
    return folder
