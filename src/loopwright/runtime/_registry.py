"""A named registry: the seam behind every `@tool`, `@agent_loop`, `@fn` and `@check` decorator."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Generic, TypeVar

from loopwright.errors import ConfigError, UsageError

__all__ = ["Registry"]

T = TypeVar("T")


class Registry(Generic[T]):
    """Implementations of one extension point by name (`kind` says which: "tool", "fn"...).

    Names are unique: registering a taken name is a UsageError (a programming mistake, not
    data). Lookup of an unknown name is a ConfigError listing the known ones. `copy()` gives
    an independent registry, so a test or a plugin can add names without touching the default.
    """

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._items: dict[str, T] = {}

    def add(self, name: str, item: T) -> T:
        """Register `item` under `name` and return it. UsageError if the name is taken."""
        if name in self._items:
            raise UsageError(f"a {self.kind} named {name!r} is already registered")
        self._items[name] = item
        return item

    def register(self, name: str) -> Callable[[T], T]:
        """A decorator registering what it decorates under `name` (returned unchanged)."""

        def decorate(item: T) -> T:
            return self.add(name, item)

        return decorate

    def get(self, name: str) -> T:
        """The implementation named `name`; ConfigError listing the known names if none."""
        try:
            return self._items[name]
        except KeyError:
            raise ConfigError(
                f"unknown {self.kind} {name!r}",
                got=name,
                fix=f"use one of: {', '.join(self.names()) or '(none registered)'}",
            ) from None

    def names(self) -> tuple[str, ...]:
        """The registered names, sorted."""
        return tuple(sorted(self._items))

    def copy(self) -> Registry[T]:
        """An independent registry holding the same items."""
        clone: Registry[T] = Registry(self.kind)
        clone._items.update(self._items)
        return clone

    def __contains__(self, name: object) -> bool:
        return name in self._items

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def __repr__(self) -> str:
        return f"Registry({self.kind!r}, {list(self.names())})"
