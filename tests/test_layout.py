"""The layout's rule (design.md §1): no folder reaches into another folder's private modules.

A module whose name starts with `_` is a folder's machinery; other folders use the names its
`__init__` re-exports. Tests may look inside the folder they mirror (`tests/cua/` → `cua._parser`),
and nowhere else; cross-cutting tests (`tests/reliability/`, `tests/*.py`) and `bench/` use public
names only.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def product_folders() -> tuple[str, ...]:
    """The product's top-level packages, as pyproject.toml ships them (a new folder is checked by being shipped)."""
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    patterns = config["tool"]["setuptools"]["packages"]["find"]["include"]
    return tuple(sorted(pattern.rstrip("*") for pattern in patterns))


FOLDERS = product_folders()
CHECKED = (*FOLDERS, "bench", "tests", "scripts")


def _home(parts: tuple[str, ...]) -> str | None:
    """The folder whose private modules a file may import: its own (tests: the one they mirror)."""
    if parts[0] == "tests":
        return parts[1] if len(parts) > 2 and parts[1] in FOLDERS else None
    return parts[0] if parts[0] in FOLDERS else None


def _imported_modules(tree: ast.AST) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.lineno, node.module))
            # `from cua import _coordinates` reaches a private module as well
            found += [(node.lineno, f"{node.module}.{alias.name}") for alias in node.names if alias.name.startswith("_")
                      and not alias.name.startswith("__")]
        elif isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
    return found


def private_imports_across_folders(root: Path = ROOT) -> list[str]:
    """`file:line: module` for every import of another folder's private module under `root`."""
    problems = []
    for folder in CHECKED:
        for path in sorted((root / folder).rglob("*.py")):
            home = _home(path.relative_to(root).parts)
            for line, module in _imported_modules(ast.parse(path.read_text(encoding="utf-8"), str(path))):
                parts = module.split(".")
                if parts[0] not in FOLDERS or parts[0] == home:
                    continue
                if any(part.startswith("_") and not part.startswith("__") for part in parts[1:]):
                    problems.append(f"{path.relative_to(root)}:{line}: {module}")
    return problems


def test_no_folder_imports_another_folders_private_modules():
    assert private_imports_across_folders() == []


def test_the_rule_catches_a_private_import(tmp_path):
    """The scan itself can fail: a planted `from cua._coordinates import …` in flows/ and bench/ is found."""
    for folder, text in (("flows", "from cua._coordinates import smart_resize\n"),
                         ("bench", "import llm._client\n"),
                         ("tests/reliability", "from flows import _loop\n"),
                         ("tests/cua", "from cua._parser import parse_uitars\nfrom verifier._gate import gate_checker\n")):
        (tmp_path / folder).mkdir(parents=True)
        (tmp_path / folder / "planted.py").write_text(text)
    found = private_imports_across_folders(tmp_path)
    assert sorted(found) == [
        "bench/planted.py:1: llm._client",
        "flows/planted.py:1: cua._coordinates",
        "tests/cua/planted.py:2: verifier._gate",
        "tests/reliability/planted.py:1: flows._loop",
    ]


PACKAGES = sorted(init.parent.relative_to(ROOT).as_posix() for folder in FOLDERS for init in (ROOT / folder).rglob("__init__.py"))


@pytest.mark.parametrize("package", PACKAGES)
def test_every_folder_says_what_it_holds(package):
    """Each folder's `__init__` (and each subpackage's: `verifier/judge`, `cua/policies`) opens with a docstring."""
    init = ROOT / package / "__init__.py"
    tree = ast.parse(init.read_text(encoding="utf-8"))
    assert ast.get_docstring(tree), f"{init} has no docstring saying what the folder holds"


def test_every_prompt_file_the_manifest_hashes_exists():
    """`flows.ROLE_PROMPTS` names files by path; a moved module would otherwise hash as "missing"."""
    from flows import ROLE_PROMPTS

    assert [path for paths in ROLE_PROMPTS.values() for path in paths if not (ROOT / path).is_file()] == []


def test_nothing_below_the_viewer_imports_it():
    """The viewer sits on top (it reads what the flows write); only the CLI and its benchmark start it."""
    allowed = {("aui",), ("viewer",), ("tests", "viewer"), ("tests", "aui"), ("bench", "viewer_load.py")}
    found = []
    for folder in (*FOLDERS, "bench", "tests"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            parts = path.relative_to(ROOT).parts
            if any(parts[: len(prefix)] == prefix for prefix in allowed):
                continue
            for line, module in _imported_modules(ast.parse(path.read_text(encoding="utf-8"), str(path))):
                if module == "viewer" or module.startswith("viewer."):
                    found.append(f"{path.relative_to(ROOT)}:{line}: {module}")
    assert found == []


def readme_layout_folders(readme: str) -> list[str]:
    """The folders the README's "Layout" table names in its first column (`cua/policies/` as `cua/policies`)."""
    section = readme.split("\n## Layout", 1)[1].split("\n## ", 1)[0]
    folders = []
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if line.startswith("|") and cells[0].startswith("`") and cells[0].endswith("/`"):
            folders.append(cells[0].strip("`").rstrip("/"))
    return folders


def tracked_top_level_folders() -> set[str]:
    """Every top-level folder holding a file git tracks (hidden ones too: `.ci`)."""
    import subprocess

    listed = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    return {path.split("/", 1)[0] for path in listed.splitlines() if "/" in path}


def test_the_readme_layout_table_names_every_tracked_folder_and_only_folders_that_exist():
    """The table drifted once (no `docs/`, no `.ci/`); a folder added or removed now fails here until the README says so."""
    named = readme_layout_folders((ROOT / "README.md").read_text(encoding="utf-8"))
    assert len(named) > 10, "the Layout table was not found in README.md"
    assert sorted(tracked_top_level_folders() - set(named)) == [], "tracked folders without a row in the README's Layout table"
    assert [folder for folder in named if not (ROOT / folder).is_dir()] == [], "Layout rows naming no folder"


# ---- the house's floors (issue 30) ------------------------------------------------------------------

FLOORS = {
    "aui": 6,                                  # the command, on top
    "flows": 5, "viewer": 5, "bench": 5,       # orchestration, the viewer, the benchmarks
    "experiment": 4,                           # an experiment before it runs: config, role players, plan, checks
    "insights": 4,                             # design insights: change log, attribution, principle table
    "environments": 4,                         # every app a Gymnasium environment (cua.AppEnv behind Gymnasium's API)
    "results": 3,                              # what a run folder holds
    "coder": 2, "verifier": 2, "commenter": 2, "dashboard_render": 2, "perturb": 2,  # the roles
    "cua": 1, "apps_prompts": 1,               # the environment, the apps and tasks
    "llm": 0, "code_version": 0, "source_scan": 0,  # models; which code a function runs; reading JS and CSS source
}
"""Each product folder's floor: a folder imports only folders on lower floors (or on its own, without a loop)."""


def _module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def module_imports(root: Path = ROOT, folders: tuple[str, ...] = (*FOLDERS, "bench")) -> dict[str, set[str]]:
    """Product module → the product modules it imports anywhere in it (function bodies and TYPE_CHECKING too):
    `from package import name` counts as an import of `package.name` when that is a module, else of `package`."""
    paths = {_module_name(path, root): path for folder in folders for path in (root / folder).rglob("*.py")}
    edges: dict[str, set[str]] = {}
    for name, path in paths.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package
                    for _ in range(node.level - 1):
                        anchor = anchor.rpartition(".")[0]
                    base = f"{anchor}.{base}" if base else anchor
                targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in paths else base for alias in node.names]
            elif isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                continue
            for target in targets:
                while target and target not in paths:
                    target = target.rpartition(".")[0]
                if target and target != name:
                    edges.setdefault(name, set()).add(target)
    return edges


def import_circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Every set of modules that import each other in a loop: the strongly connected sets of more than one
    (Tarjan's algorithm, iterative: the graph has hundreds of modules)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles = []
    for start in sorted({*edges, *(b for targets in edges.values() for b in targets)}):
        if start in index:
            continue
        work = [(start, iter(sorted(edges.get(start, ()))))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, successors = work[-1]
            for successor in successors:
                if successor not in index:
                    index[successor] = low[successor] = len(index)
                    stack.append(successor)
                    on_stack.add(successor)
                    work.append((successor, iter(sorted(edges.get(successor, ())))))
                    break
                if successor in on_stack:
                    low[node] = min(low[node], index[successor])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        circles.append(sorted(component))
    return sorted(circles)


def imports_against_the_floors(edges: dict[str, set[str]]) -> list[str]:
    """`a -> b` for every folder import that goes up a floor, or sideways in a loop."""
    folder_edges = {(a.split(".")[0], b.split(".")[0]) for a, targets in edges.items() for b in targets}
    folder_edges = {(a, b) for a, b in folder_edges if a != b and a in FLOORS and b in FLOORS}
    found = [f"{a} -> {b}" for a, b in sorted(folder_edges) if FLOORS[a] < FLOORS[b]]
    sideways = {}
    for a, b in folder_edges:
        if FLOORS[a] == FLOORS[b]:
            sideways.setdefault(a, set()).add(b)
    found += [f"{' <-> '.join(loop)} (a loop on one floor)" for loop in import_circles(sideways)]
    return found


def test_every_product_folder_has_a_floor():
    assert set(FLOORS) == {*FOLDERS, "bench"}


def test_folders_import_only_downwards_and_no_files_import_each_other_in_a_circle():
    edges = module_imports()
    assert imports_against_the_floors(edges) == []
    assert import_circles(edges) == []


def test_the_floor_rules_catch_an_upward_import_and_a_circle(tmp_path):
    """The checks themselves can fail: results importing flows goes up a floor, two roles importing each other loop on
    one floor, and two modules importing each other (one inside a function) are a circle."""
    for path, text in (("results/__init__.py", "from ._a import A\n"), ("results/_a.py", "from ._b import B\nA = 1\n"),
                       ("results/_b.py", "def late():\n    from ._a import A\n\nfrom flows import sweep\nB = 2\n"),
                       ("flows/__init__.py", "from results import A\n"),
                       ("coder/__init__.py", "import verifier\n"), ("verifier/__init__.py", "from coder import x\n")):
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)
    edges = module_imports(tmp_path, ("results", "flows", "coder", "verifier"))
    assert imports_against_the_floors(edges) == ["results -> flows", "coder <-> verifier (a loop on one floor)"]
    assert import_circles(edges) == [["coder", "verifier"], ["flows", "results", "results._a", "results._b"]]


MAX_FILE_LINES = 450
MAX_FUNCTION_LINES = 80


def oversized(root: Path = ROOT, folders: tuple[str, ...] = FOLDERS) -> list[str]:
    """Product files over MAX_FILE_LINES lines and functions over MAX_FUNCTION_LINES (decorators counted; bench is
    outside the rule)."""
    found = []
    for folder in folders:
        for path in sorted((root / folder).rglob("*.py")):
            text = path.read_text(encoding="utf-8")
            name = path.relative_to(root)
            if text.count("\n") > MAX_FILE_LINES:
                found.append(f"{name}: {text.count(chr(10))} lines")
            for node in ast.walk(ast.parse(text, str(path))):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    start = min([node.lineno, *(decorator.lineno for decorator in node.decorator_list)])
                    if node.end_lineno - start + 1 > MAX_FUNCTION_LINES:
                        found.append(f"{name}:{node.lineno} {node.name}: {node.end_lineno - start + 1} lines")
    return found


def test_no_product_file_or_function_is_oversized():
    assert oversized() == []


def late_imports_without_a_reason(root: Path = ROOT, folders: tuple[str, ...] = (*FOLDERS, "bench")) -> list[str]:
    """Imports of another project folder written inside a function with no comment saying why: on the import's own
    lines, or a comment line just above the block of imports it belongs to."""
    found = []
    for folder in folders:
        for path in sorted((root / folder).rglob("*.py")):
            text = path.read_text(encoding="utf-8")
            lines = text.split("\n")
            for function in ast.walk(ast.parse(text, str(path))):
                if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    continue
                for node in ast.walk(function):
                    if isinstance(node, ast.ImportFrom) and not node.level and node.module:
                        top = node.module.split(".")[0]
                    elif isinstance(node, ast.Import):
                        top = node.names[0].name.split(".")[0]
                    else:
                        continue
                    if top not in FOLDERS or top == folder:
                        continue
                    if any("#" in line for line in lines[node.lineno - 1:node.end_lineno]):
                        continue
                    above = node.lineno - 2
                    while above >= 0 and lines[above].strip().startswith(("from ", "import ", ")")) or (
                            above >= 0 and lines[above].strip() == "" and lines[above - 1].strip().startswith(
                                ("from ", "import "))):
                        above -= 1
                    if above >= 0 and lines[above].strip().startswith("#"):
                        continue
                    found.append(f"{path.relative_to(root)}:{node.lineno}: {lines[node.lineno - 1].strip()}")
    return found


def test_imports_sit_at_the_top_unless_a_comment_says_why():
    assert late_imports_without_a_reason() == []


def test_the_size_and_import_rules_catch_what_they_forbid(tmp_path):
    """A 451-line file, an 81-line function and an unexplained late import are found; a commented one is not."""
    (tmp_path / "cua").mkdir()
    (tmp_path / "cua" / "long.py").write_text("x = 1\n" * 451)
    body = "".join(f"    y{i} = {i}\n" for i in range(80))
    (tmp_path / "cua" / "wide.py").write_text(f"def wide():\n{body}")
    (tmp_path / "cua" / "late.py").write_text(
        "def late():\n    from llm import get_client\n\n"
        "def reasoned():\n    # here, not at the top: a planted reason\n    from llm import get_client\n    from results import x\n"
        "def own():\n    from cua import y\n")
    assert oversized(tmp_path, ("cua",)) == ["cua/long.py: 451 lines", "cua/wide.py:1 wide: 81 lines"]
    assert late_imports_without_a_reason(tmp_path, ("cua",)) == ["cua/late.py:2: from llm import get_client"]
