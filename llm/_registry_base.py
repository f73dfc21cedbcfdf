"""A small registry of named providers, shared by every package that picks an implementation by name.

Policies (`"uitars"`, `"heuristic"`), coders, commenters and offline models are all "a name in a
config maps to a thing in code". Keeping that mapping in one tiny class means a new provider is
one module and one decorator line, and a typo in a config gets the same clear error everywhere.
One naming: a registry is a module constant named for what it holds (`POLICIES`, `CODERS`,
`COMMENTERS`, `JUDGES`, `DETECTORS`), and the factory that builds one by name is `get_<role>`.
"""

from __future__ import annotations

import importlib
import re
import shlex
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Generic, TypeVar

T = TypeVar("T")


class UnknownNameError(LookupError):
    """A name was looked up that nothing registered; the message lists the known names."""

    def __init__(self, kind: str, name: str, known: list[str]) -> None:
        self.kind = kind
        self.name = name
        self.known = known
        listing = ", ".join(repr(k) for k in known) if known else "(none registered)"
        super().__init__(f"unknown {kind} {name!r}; known {kind} names: {listing}")

    def __str__(self) -> str:
        # LookupError/KeyError would repr() the message and wrap it in quotes.
        return str(self.args[0])


class MissingOptionalPackageError(ImportError):
    """A lazily registered provider needs an optional package that is not installed.

    The message names the provider and the pip command that installs the package; `name` (as
    for any ImportError) is the module that was missing.
    """

    def __init__(self, kind: str, entry: str, requirement: str, missing_module: str | None) -> None:
        self.kind = kind
        self.entry = entry
        self.requirement = requirement
        self.package = _distribution_name(requirement)
        super().__init__(
            f"{kind} {entry!r} needs the optional package {self.package!r}: pip install {shlex.quote(requirement)}",
            name=missing_module,
        )


_REQUIREMENT = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?")


def _distribution_name(requirement: str) -> str:
    """`prefect-dask==0.3.7` / `foo[extra]>=1` → `prefect-dask` / `foo` (the name pip shows)."""
    match = _REQUIREMENT.match(requirement.strip())
    return match.group(0) if match else requirement.strip()


@dataclass(frozen=True)
class LazyEntry:
    """A provider registered by import path (`"package.module:attribute"`), imported on first use."""

    target: str
    requires: str | None = None
    """The pip requirement of the optional package the target needs (`"prefect-dask"`), if any."""
    requires_module: str | None = None
    """The module that package installs, when it is not the pip name with `-`/`.` as `_`."""

    def load(self, kind: str, name: str) -> object:
        """Import the target and return its attribute.

        Raises:
            MissingOptionalPackageError: the declared optional package is not installed.
            ImportError / AttributeError: anything else went wrong (e.g. a typo in the target, or a
                missing module that is not the declared package), as raised.
        """
        module, _, attribute = self.target.partition(":")
        try:
            imported = importlib.import_module(module)
        except ModuleNotFoundError as exc:
            if self.requires is None or not exc.name:
                raise
            # The declared package's top module: `requires_module`, else the pip name with `-`/`.` as `_`.
            optional = self.requires_module or re.sub(r"[-.]", "_", _distribution_name(self.requires)).lower()
            missing = exc.name  # the optional package, one of its submodules, or a package that contains it
            if missing == optional or missing.startswith(optional + ".") or optional.startswith(missing + "."):
                raise MissingOptionalPackageError(kind, name, self.requires, missing) from exc
            raise
        return getattr(imported, attribute)


class Registry(Generic[T]):
    """Maps names to providers of type `T`.

    Register eagerly with the `register` decorator, or lazily with `register_lazy`
    (`"package.module:attribute"`), so optional SDKs are only imported when that provider is
    actually chosen; a lazy entry may name the optional package it needs (`requires=`), and then
    a missing package is an error that says how to install it. Lookups are thread-safe.

    Example:
        POLICIES: Registry[type[Policy]] = Registry("policy")

        @POLICIES.register("heuristic")
        class HeuristicPolicy: ...

        POLICIES.get("heuristic")
        POLICIES.register_lazy("dask", "flows._dask:dask_task_runner", requires="prefect-dask")
    """

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._items: dict[str, T] = {}
        # Lazy entries stay listed after their first import (`lazy_entries`); `_items` caches what
        # they resolved to.
        self._lazy: dict[str, LazyEntry] = {}
        self._lock = threading.Lock()

    def register(self, name: str, *, replace: bool = False) -> Callable[[T], T]:
        """Decorator registering the decorated object under `name`.

        Raises:
            ValueError: `name` is already registered and `replace` is False.
        """

        def decorator(item: T) -> T:
            self.add(name, item, replace=replace)
            return item

        return decorator

    def add(self, name: str, item: T, *, replace: bool = False) -> None:
        """Register `item` under `name` (the non-decorator form of `register`).

        Raises:
            ValueError: `name` is already registered and `replace` is False.
        """
        with self._lock:
            self._check_free(name, replace)
            self._lazy.pop(name, None)
            self._items[name] = item

    def register_lazy(
        self,
        name: str,
        target: str,
        *,
        requires: str | None = None,
        requires_module: str | None = None,
        replace: bool = False,
    ) -> None:
        """Register `name` as `"package.module:attribute"`, imported on first `get`.

        `requires` names the optional package the target needs, as pip installs it
        (`"prefect-dask"`, or a requirement such as `"prefect-dask==0.3.7"`); `requires_module`
        is the module that package installs when it is not the pip name with `-` as `_`
        (`requires="Pillow", requires_module="PIL"`).

        Raises:
            ValueError: `name` is already registered and `replace` is False, `target` is not of
                the form `module:attribute`, or `requires_module` is given without `requires`.
        """
        module, _, attribute = target.partition(":")
        if not module or not attribute:
            raise ValueError(f"lazy {self.kind} target must be 'module:attribute', got {target!r}")
        if requires_module is not None and requires is None:
            raise ValueError(f"lazy {self.kind} {name!r}: requires_module needs requires (the pip name)")
        entry = LazyEntry(target, requires, requires_module)
        with self._lock:
            self._check_free(name, replace)
            self._items.pop(name, None)
            self._lazy[name] = entry

    def get(self, name: str) -> T:
        """The provider registered under `name`, importing it first if it was registered lazily.

        Raises:
            UnknownNameError: nothing is registered under `name` (the message lists known names).
            MissingOptionalPackageError: a lazy entry's declared optional package is not installed
                (an ImportError whose message gives the pip command).
            ImportError / AttributeError: a lazy target could not be imported for another reason.
        """
        with self._lock:
            if name in self._items:
                return self._items[name]
            entry = self._lazy.get(name)
            if entry is None:
                raise UnknownNameError(self.kind, name, self._names())
        # Import outside the lock: the imported module may itself register things.
        item = entry.load(self.kind, name)
        with self._lock:
            if self._lazy.get(name) is entry:
                self._items[name] = item
            return self._items.get(name, item)

    def lazy_entries(self) -> dict[str, LazyEntry]:
        """The entries registered with `register_lazy`, by name, whether or not imported yet."""
        with self._lock:
            return dict(sorted(self._lazy.items()))

    def names(self) -> list[str]:
        """All registered names, sorted."""
        with self._lock:
            return self._names()

    def __contains__(self, name: object) -> bool:
        with self._lock:
            return name in self._items or name in self._lazy

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def __len__(self) -> int:
        return len(self.names())

    def __repr__(self) -> str:
        return f"Registry({self.kind!r}, names={self.names()})"

    def _names(self) -> list[str]:
        return sorted({*self._items, *self._lazy})

    def _check_free(self, name: str, replace: bool) -> None:
        if not replace and (name in self._items or name in self._lazy):
            raise ValueError(f"{self.kind} {name!r} is already registered; pass replace=True to override")
