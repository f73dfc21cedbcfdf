"""Which code a stage runs, as a fingerprint: what its cache key must cover besides its inputs.

Prefect's `TASK_SOURCE` hashes the stage function's own source and nothing it calls, so a change to
the heuristic's matching, a prompt template or a checker wrapper `.js` used to come back from the
cache as if nothing had changed. The fingerprint of a stage is the sha256 of every project file it
can run, found by reading the code (`ast`), not by importing it:

- in `flows` (the orchestration), function by function: the stage function, the decorators and
  module-level names it uses, and what those use in turn across `flows` modules — so the verify
  stage does not depend on the rollout stage's helpers that sit in the same package;
- elsewhere, module by module: a module imported anywhere in it (at the top or inside a function)
  brings in the whole module, its parent packages' `__init__`, the `"package.module:attribute"`
  targets of lazily registered providers it names (a policy, a coder), and the data files beside it
  that it names (`_harness.js`, `_read_page.js`): the JavaScript and templates are code too.

What the project calls outside (the Chromium binary and its version, the models a stage's inputs
name) is added by the cache policy (`flows._cache`), not here.
"""

from __future__ import annotations

import ast
import contextlib
import functools
import hashlib
import importlib.util
import itertools
import json
import os
import re
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parents[1]
ORCHESTRATION = "flows"
"""The package read function by function: its `__init__` only re-exports, and its modules hold
every stage side by side."""

KEY_MACHINERY = frozenset({"flows._cache", "code_version", "code_version._closure"})
"""Modules that compute the keys, not results: a stage's decorator names them, but they are not its code."""

_PARSE_LOCK = threading.Lock()
_PARSE_TRIES = 3


def parse_source(source: str, filename: str) -> ast.Module:
    """`ast.parse`, safe in Prefect's task threads on CPython 3.11.

    CPython 3.11 keeps the AST constructor's depth counter per interpreter, not per thread
    (python/cpython#106905): when the collector runs a finaliser in the middle of a tree's
    construction, the GIL can pass to another thread that parses too, and the first parse then
    fails with a spurious `SystemError: AST constructor recursion depth mismatch` — it failed a
    sweep in CI. So one parse at a time in this process; and a parse spoiled by a parse outside this
    lock (3.11's `traceback` parses a line to place its carets) is tried again, a bounded number of
    times: the source is the same, so a clean parse gives the same tree.
    """
    for attempt in range(1, _PARSE_TRIES + 1):
        try:
            with _PARSE_LOCK:
                return ast.parse(source, filename=filename)
        except SystemError as error:
            if "recursion depth mismatch" not in str(error) or attempt == _PARSE_TRIES:
                raise
    raise AssertionError("unreachable: the last try returns or raises")


_LAZY_TARGET = re.compile(r"^([A-Za-z_]\w*(?:\.\w+)*):([A-Za-z_]\w*)$")
_DATA_SUFFIXES = (".js", ".json", ".css", ".html", ".txt", ".j2", ".jinja", ".yaml", ".yml", ".md")


@functools.cache
def project_packages() -> frozenset[str]:
    """The top-level packages of the project (folders with an `__init__.py` beside `flows`)."""
    return frozenset(path.parent.name for path in PROJECT_ROOT.glob("*/__init__.py"))


@functools.cache
def module_file(name: str) -> Path | None:
    """The project file of module `name` (`a/b.py` or `a/b/__init__.py`); None outside the project."""
    if name.split(".")[0] not in project_packages():
        return None
    base = PROJECT_ROOT.joinpath(*name.split("."))
    return next((path for path in (base.with_suffix(".py"), base / "__init__.py") if path.is_file()), None)


def _is_package(name: str) -> bool:
    path = module_file(name)
    return path is not None and path.name == "__init__.py"


@dataclass(eq=False)  # hashed by identity: one per module (`_parse` is cached)
class _Module:
    """What one module's source says about its dependencies."""

    name: str
    path: Path
    tree: ast.Module
    bindings: dict[str, ast.AST] = field(default_factory=dict)
    """Module-level names bound by a def, a class or an assignment → that statement."""
    imported: dict[str, tuple[str, str | None]] = field(default_factory=dict)
    """Module-level names bound by an import → (module, attribute or None)."""


@functools.cache
def _parse(name: str) -> _Module | None:
    path = module_file(name)
    if path is None:
        return None
    module = _Module(name, path, parse_source(path.read_text(encoding="utf-8"), str(path)))
    for statement in module.tree.body:
        if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            module.bindings[statement.name] = statement
        elif isinstance(statement, ast.Assign | ast.AnnAssign | ast.AugAssign):
            targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
            names = (node.id for target in targets for node in ast.walk(target) if isinstance(node, ast.Name))
            module.bindings.update(dict.fromkeys(names, statement))
        elif isinstance(statement, ast.Import | ast.ImportFrom):
            module.imported.update(_imports_of(statement, module.name))
    return module


def _imports_of(node: ast.Import | ast.ImportFrom, importer: str):
    """(bound name, (module, attribute or None)) for each name an import statement binds, as written."""
    if isinstance(node, ast.Import):
        for alias in node.names:
            yield (alias.asname or alias.name.split(".")[0]), (alias.name, None)
        return
    base = node.module or ""
    if node.level:
        package = importer if _is_package(importer) else importer.rpartition(".")[0]
        base = importlib.util.resolve_name("." * node.level + base, package)
    for alias in node.names:
        if alias.name == "*":
            yield "*", (base, None)
        else:
            yield (alias.asname or alias.name), (base, alias.name)


def _resolved(base: str, attribute: str | None) -> tuple[str, str | None]:
    """`from base import attribute`: the submodule `base.attribute` where there is one, else the name in `base`."""
    if attribute is not None and module_file(f"{base}.{attribute}") is not None:
        return f"{base}.{attribute}", None
    return base, attribute


@functools.cache
def _dependencies(name: str) -> tuple[tuple[tuple[str, str | None], ...], tuple[str, ...]]:
    """(imports, string constants) anywhere in module `name`: one walk of its syntax tree, remembered
    on disk by the sha256 of its text (reading ≈ 150 modules' trees costs seconds; hashing them, little)."""
    key = f"{name} {hashlib.sha256(module_file(name).read_bytes()).hexdigest()}"
    known = _disk_cache().get(key)
    if known is None:
        module = _parse(name)
        imports, strings = _dependencies_of(module, module.tree)
        known = _disk_cache()[key] = [list(map(list, imports)), list(strings)]
        _DIRTY.add(key)
    return tuple(map(tuple, known[0])), tuple(known[1])


_DIRTY: set[str] = set()


# Beside the checkout it describes (not in the model call cache, AUI_CACHE_DIR, whose files are calls).
_CACHE_PATH = PROJECT_ROOT / ".cache" / "code-dependencies.json"


@functools.cache
def _disk_cache() -> dict:
    try:
        return json.loads(_CACHE_PATH.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def _save_disk_cache() -> None:
    """Keep what was learnt (entries of files that no longer exist age out with a new cache folder)."""
    if not _DIRTY:
        return
    with contextlib.suppress(OSError):  # a read-only checkout: the next process reads the trees again
        _CACHE_PATH.parent.mkdir(parents=True, exist_ok=True)
        temporary = _CACHE_PATH.with_name(f".{_CACHE_PATH.name}.{os.getpid()}")
        temporary.write_text(json.dumps(_disk_cache()), encoding="utf-8")
        os.replace(temporary, _CACHE_PATH)
        _DIRTY.clear()


def _dependencies_of(module: _Module, node: ast.AST):
    """(imports as (module, attribute or None), string constants that may name a provider or a data file) in `node`."""
    imports: list[tuple[str, str | None]] = []
    strings: list[str] = []
    for inner in _walk(node):
        if isinstance(inner, ast.Import | ast.ImportFrom):
            imports.extend(source for _, source in _imports_of(inner, module.name))
        elif isinstance(inner, ast.Constant) and isinstance(inner.value, str) and len(inner.value) < 200 and (
                inner.value.endswith(_DATA_SUFFIXES) or _LAZY_TARGET.match(inner.value)):
            strings.append(inner.value)
    return tuple(dict.fromkeys(imports)), tuple(dict.fromkeys(strings))


@functools.cache
def _statement_facts(module: _Module, node: ast.AST) -> tuple:
    """(imports, strings, names used) of one statement of an orchestration module (remembered: every stage reads them)."""
    own = getattr(node, "name", None)
    names = tuple(dict.fromkeys(inner.id for inner in _walk(node) if isinstance(inner, ast.Name) and inner.id != own))
    return (*_dependencies_of(module, node), names)


def _walk(node: ast.AST):
    """`ast.walk`, leaving out `if TYPE_CHECKING:` blocks (imports for type checkers never run)."""
    pending = [node]
    while pending:
        current = pending.pop()
        yield current
        type_checking = isinstance(current, ast.If) and _is_type_checking(current.test)
        pending.extend(current.orelse if type_checking else ast.iter_child_nodes(current))


def _is_type_checking(test: ast.AST) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _precise(name: str) -> bool:
    """Modules read name by name: the orchestration's, and every package's `__init__` (which mostly
    re-exports: `from cua import Viewport` runs `cua._viewport`, not the heuristic `cua` also exports)."""
    return name.split(".")[0] == ORCHESTRATION or _is_package(name)


class _Closure:
    """The files one stage can run, gathered from its function."""

    def __init__(self) -> None:
        self.files: set[Path] = set()
        self._modules: set[str] = set()
        self._names: set[tuple[str, str]] = set()

    # ---- outside the orchestration: whole modules ---------------------------------------------

    def add_module(self, name: str, attribute: str | None = None) -> None:
        """Module `name` (and what importing it runs in its parent packages): a package `__init__` or an
        orchestration module name by name (`attribute`; None with `import package`: every name it binds),
        any other module whole."""
        # Which imported names are submodules depends on the files beside the module, not on its text: resolved here.
        name, attribute = _resolved(name, attribute)
        for each in itertools.accumulate(name.split("."), "{}.{}".format):  # `a`, `a.b`, `a.b.c`: the parents too
            if _precise(each):
                self._add_orchestration(each, attribute if each == name else None)
            else:
                self._whole(each)
        module = _parse(name) if attribute is None and _precise(name) else None
        if module is not None and name.split(".")[0] != ORCHESTRATION:
            for bound in [*module.bindings, *module.imported]:
                if bound != "*":
                    self.add_name(name, bound)

    def _whole(self, name: str) -> None:
        path = module_file(name)
        if name in self._modules or path is None:
            return
        self._modules.add(name)
        self.files.add(path)
        self._take(path, *_dependencies(name))

    def _take(self, path: Path, imports, strings) -> None:
        for target, attribute in imports:
            self.add_module(target, attribute)
        for text in strings:
            lazy = _LAZY_TARGET.match(text)
            if lazy and module_file(lazy.group(1)) is not None:
                self.add_module(lazy.group(1), text.partition(":")[2])
            elif text.endswith(_DATA_SUFFIXES) and "/" not in text:
                sibling = path.with_name(text)
                if sibling.is_file():
                    self.files.add(sibling)

    # ---- inside the orchestration: name by name ------------------------------------------------

    def _add_orchestration(self, name: str, attribute: str | None) -> None:
        """`attribute` of orchestration module `name` (None: only the module's own top-level code
        that is not a def or class, i.e. what importing it runs)."""
        module = None if name in KEY_MACHINERY else _parse(name)
        if module is None:
            return
        self.files.add(module.path)
        if (name, "") not in self._names:  # what importing the module runs: its top-level statements
            self._names.add((name, ""))
            for statement in module.tree.body:
                if isinstance(statement, ast.Import | ast.ImportFrom):
                    continue  # names imported at the top count where they are used
                if not isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Assign | ast.AnnAssign):
                    self._follow(module, statement)
        if attribute is not None:
            self.add_name(name, attribute)

    def add_name(self, module_name: str, attribute: str) -> None:
        if (module_name, attribute) in self._names:
            return
        self._names.add((module_name, attribute))
        module = None if module_name in KEY_MACHINERY else _parse(module_name)
        if module is None:
            return
        if attribute in module.bindings:
            self._follow(module, module.bindings[attribute])
        elif attribute in module.imported:
            self.add_module(*module.imported[attribute])
        elif module_file(f"{module_name}.{attribute}") is not None:
            self.add_module(f"{module_name}.{attribute}")
        else:  # a name that is not a def, class or assignment at the top (e.g. from `import *`)
            self._follow(module, module.tree)

    def _follow(self, module: _Module, node: ast.AST) -> None:
        """The dependencies of one top-level statement of an orchestration module."""
        self.files.add(module.path)
        imports, strings, names = _statement_facts(module, node)
        self._take(module.path, imports, strings)
        for name in names:
            if name in module.bindings:
                self.add_name(module.name, name)
            elif name in module.imported:
                self.add_module(*module.imported[name])


def stage_files(module: str, function: str) -> list[Path]:
    """Every project file stage `function` of orchestration module `module` can run, sorted."""
    closure = _Closure()
    closure._add_orchestration(module, function)
    _save_disk_cache()
    return sorted(closure.files)


def file_hashes(files: list[Path]) -> dict[str, str]:
    """{path relative to the project: sha256 of its bytes}."""
    return {str(path.relative_to(PROJECT_ROOT)): hashlib.sha256(path.read_bytes()).hexdigest() for path in files}


def digest(hashes: dict[str, str]) -> str:
    """One sha256 over {name: hash} (sorted)."""
    return hashlib.sha256("\n".join(f"{name} {value}" for name, value in sorted(hashes.items())).encode()).hexdigest()


def imported_packages(files: list[Path]) -> list[str]:
    """The top-level names of what `files` import from outside the project and the standard library
    (`PIL`, `playwright`, `bs4`…), sorted: the installed packages whose versions can change what they compute."""
    found = set().union(*(_top_level_imports(path.read_text(encoding="utf-8"), str(path))
                          for path in files if path.suffix == ".py"))
    return sorted(name for name in found
                  if name not in project_packages() and name not in sys.stdlib_module_names and name != "__future__")


@functools.lru_cache(maxsize=2048)
def _top_level_imports(source: str, filename: str) -> frozenset[str]:
    """The top-level names a source imports absolutely. Keyed by the text, so an edited file is read again; most
    files are in several stages' code, and a run asks once per stage kind (parsing each again was ≈ 1 s a run)."""
    found: set[str] = set()
    for node in ast.walk(parse_source(source, filename)):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.split(".")[0])
    return frozenset(found)
