"""A small registry of named providers, shared by every package that picks an implementation by name.

Policies (`"uitars"`, `"heuristic"`), coders, commenters and offline models are all "a name in a
config maps to a thing in code". Keeping that mapping in one tiny class means a new provider is
one module and one decorator line, and a typo in a config gets the same clear error everywhere.
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Callable, Iterator
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


class Registry(Generic[T]):
    """Maps names to providers of type `T`.

    Register eagerly with the `register` decorator, or lazily with `register_lazy`
    (`"package.module:attribute"`), so optional SDKs are only imported when that provider is
    actually chosen. Lookups are thread-safe.

    Example:
        policies: Registry[type[Policy]] = Registry("policy")

        @policies.register("heuristic")
        class HeuristicPolicy: ...

        policies.get("heuristic")
    """

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._items: dict[str, T] = {}
        self._lazy: dict[str, str] = {}
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

    def register_lazy(self, name: str, target: str, *, replace: bool = False) -> None:
        """Register `name` as `"package.module:attribute"`, imported on first `get`.

        Raises:
            ValueError: `name` is already registered and `replace` is False, or `target` is not
                of the form `module:attribute`.
        """
        if ":" not in target:
            raise ValueError(f"lazy {self.kind} target must be 'module:attribute', got {target!r}")
        with self._lock:
            self._check_free(name, replace)
            self._items.pop(name, None)
            self._lazy[name] = target

    def get(self, name: str) -> T:
        """The provider registered under `name`, importing it first if it was registered lazily.

        Raises:
            UnknownNameError: nothing is registered under `name` (the message lists known names).
            ImportError / AttributeError: a lazy target could not be imported.
        """
        with self._lock:
            if name in self._items:
                return self._items[name]
            target = self._lazy.get(name)
            if target is None:
                raise UnknownNameError(self.kind, name, self._names())
        # Import outside the lock: the imported module may itself register things.
        module_name, _, attribute = target.partition(":")
        item = getattr(importlib.import_module(module_name), attribute)
        with self._lock:
            if self._lazy.get(name) == target:
                self._items[name] = item
                del self._lazy[name]
            return self._items.get(name, item)

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
        with self._lock:
            return len(self._items) + len(self._lazy)

    def __repr__(self) -> str:
        return f"Registry({self.kind!r}, names={self.names()})"

    def _names(self) -> list[str]:
        return sorted({*self._items, *self._lazy})

    def _check_free(self, name: str, replace: bool) -> None:
        if not replace and (name in self._items or name in self._lazy):
            raise ValueError(f"{self.kind} {name!r} is already registered; pass replace=True to override")
