"""The convention for JavaScript in the product: `.js` files, never JS in Python strings.

Each piece of JS is a `.js` file next to the Python module that runs it, holding one function
expression, read once at import and called with JSON-encoded arguments (or embedded in an app's
HTML as `(<function>)(<args>);`). JS in a Python string escapes linters and editors, and invites
`%`/`format` substitution into its text. The scan below is a heuristic on the string constants
of each module's AST; the one exception is `verifier/_rules_js.py`, a compiler whose output
(and the prelude it emits with it) is JS by nature.
"""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PRODUCT_FOLDERS = ("apps_prompts", "llm", "coder", "verifier", "cua", "dashboard_render", "commenter", "flows", "perturb")
# The rule-language compiler generates JS from rules; its templates are its output, not a script.
GENERATORS = {"verifier/_rules_js.py"}
MIN_LINES = 3
_FUNCTION = re.compile(r"=>|\bfunction\b\s*[\w$]*\s*\(")
_DOM = re.compile(r"\b(document|window)\s*\.|\bquerySelector(All)?\s*\(")


def _docstrings(tree: ast.AST) -> set[int]:
    """ids of the docstring constants of the module, its classes and functions."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                    and isinstance(body[0].value.value, str):
                found.add(id(body[0].value))
    return found


def _string_texts(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, text) of each string literal; an f-string counts as its literal parts joined."""
    skip = _docstrings(tree)
    inside_fstrings = {id(part) for node in ast.walk(tree) if isinstance(node, ast.JoinedStr) for part in node.values}
    texts = []
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            parts = [p.value if isinstance(p, ast.Constant) else "{…}" for p in node.values]
            texts.append((node.lineno, "".join(str(p) for p in parts)))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip \
                and id(node) not in inside_fstrings:
            texts.append((node.lineno, node.value))
    return sorted(texts)


def looks_like_javascript(text: str) -> bool:
    """A string of at least MIN_LINES lines with a JS function (`=>`, `function (`) that touches the DOM."""
    return text.count("\n") + 1 >= MIN_LINES and bool(_FUNCTION.search(text)) and bool(_DOM.search(text))


def javascript_in_strings(root: Path, folder: str) -> list[str]:
    """`path:line` of each string literal holding JS, in the Python modules of `root/folder`."""
    found = []
    for path in sorted((root / folder).rglob("*.py")):
        relative = path.relative_to(root).as_posix()
        if relative in GENERATORS:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"), relative)
        found += [f"{relative}:{line}" for line, text in _string_texts(tree) if looks_like_javascript(text)]
    return found


@pytest.mark.parametrize("folder", PRODUCT_FOLDERS)
def test_no_javascript_in_python_strings(folder):
    """JS lives in `.js` files (one function expression each), not in Python string literals."""
    assert javascript_in_strings(ROOT, folder) == []


def test_the_scan_finds_planted_javascript(tmp_path):
    """The scan can fail: a JS constant, an f-string building JS and a `%` template are found; a
    docstring quoting JS, prose and a one-line selector are not."""
    (tmp_path / "coder").mkdir()
    (tmp_path / "coder" / "planted.py").write_text(
        '"""Module doc quoting JS:\n\n    (() => {\n      document.title = "x";\n    })();\n"""\n'
        "SCRIPT = '''(() => {\n  document.body.append('x');\n})();\n'''\n"
        "def probe(x, y):\n"
        '    """Doc: function (a) { return document.body; }\n    line two\n    line three\n    """\n'
        "    return f'''(function () {{\n  return document.elementFromPoint({x}, {y});\n}})()'''\n"
        "TEMPLATE = r'''\nconst limit = %d;\nconst el = window.frames[0];\nconst f = (a) => a;\n'''\n"
        "PROSE = '''A checker is a JavaScript function body.\nIt reads the document.\nIt returns a boolean.'''\n"
        "SELECTOR = \"() => document.querySelector('#a')\"\n",
        encoding="utf-8",
    )
    assert javascript_in_strings(tmp_path, "coder") == ["coder/planted.py:7", "coder/planted.py:16", "coder/planted.py:19"]


JS_FILES = sorted(path for folder in PRODUCT_FOLDERS for path in (ROOT / folder).rglob("*.js"))


@pytest.mark.parametrize("source", JS_FILES, ids=lambda path: path.relative_to(ROOT).as_posix())
def test_each_js_file_is_read_once_at_import_by_the_module_next_to_it(source):
    reading = f'Path(__file__).with_name("{source.name}").read_text(encoding="utf-8")'
    readers = [path for path in source.parent.glob("*.py") if reading in path.read_text(encoding="utf-8")]
    assert readers, f"no module next to {source.name} reads it with {reading}"
    for path in readers:
        module = ast.parse(path.read_text(encoding="utf-8"))
        constants = [node for node in module.body if isinstance(node, ast.Assign)
                     and reading in ast.unparse(node.value).replace("'", '"')]
        assert constants, f"{path.name} reads {source.name} somewhere other than into a module constant"


async def test_each_js_file_is_one_function_expression():
    """What the convention promises callers: `(<file>)(<json args>)` is a call."""
    from cua import isolated_world, open_app

    assert len(JS_FILES) >= 10
    async with open_app("<!doctype html><p>blank</p>") as app:
        world = isolated_world(app.page)
        for source in JS_FILES:
            assert await world.evaluate(f"typeof ({source.read_text(encoding='utf-8')})") == "function", source.name


def test_the_package_ships_the_js_files():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "*.js" in config["tool"]["setuptools"]["package-data"]["*"]
