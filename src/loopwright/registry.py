"""The one registry shape of loopwright: implementations of an extension point, by name.

Every extension point that is chosen by name uses it: tools, agent loops, fn-node functions,
gate checks and external agents (`loopwright.runtime`), mutation operators
(`loopwright.search`, with `@mutation("name", axis=...)`), and benchmarks (`loopwright.tasks`).

    registry: Registry[Check] = Registry("check")

    @registry.register("visible_tests_pass")
    def visible_tests_pass(ctx): ...

    registry.get("visible_tests_pass")   # or registry["visible_tests_pass"]

Names are unique: registering a taken name is a UsageError (a programming mistake, not data).
Looking up an unknown name is a ConfigError (a config names something that does not exist)
listing the known names. Both say what was wrong and how to fix it.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from typing import Generic, TypeVar

from loopwright.errors import ConfigError, UsageError

__all__ = ["Registry"]

T = TypeVar("T")


class Registry(Generic[T]):
    """Implementations of one extension point by name; `kind` names the point in messages
    ("tool", "mutation operator"...).

    `names()` (and iteration) gives the names sorted, or in registration order when
    `in_registration_order` is set (for registries whose order is part of a seeded draw).
    `copy()` gives an independent registry, so a test or a plugin can add names without
    touching the default. Not thread-safe for registration: register at import time.
    """

    def __init__(self, kind: str, *, in_registration_order: bool = False) -> None:
        self.kind = kind
        self.in_registration_order = in_registration_order
        self._items: dict[str, T] = {}

    def add(self, name: str, item: T) -> T:
        """Register `item` under `name` and return it. UsageError if the name is taken."""
        if name in self._items:
            raise UsageError(
                f"a {self.kind} named {name!r} is already registered",
                got=f"{name!r} registered again (the names taken: {self._known()})",
                fix=f"register the new {self.kind} under another name",
            )
        self._items[name] = item
        return item

    def register(self, name: str) -> Callable[[T], T]:
        """A decorator registering what it decorates under `name` (returned unchanged)."""

        def decorate(item: T) -> T:
            return self.add(name, item)

        return decorate

    def remove(self, name: str) -> T:
        """Unregister `name` and return what it named. ConfigError if it is not registered."""
        item = self.get(name)
        del self._items[name]
        return item

    def get(self, name: str) -> T:
        """The implementation named `name`; ConfigError listing the known names if none."""
        try:
            return self._items[name]
        except KeyError:
            raise ConfigError(
                f"unknown {self.kind} {name!r}",
                got=name,
                fix=f"use one of: {self._known()}",
            ) from None

    def __getitem__(self, name: str) -> T:
        return self.get(name)

    def names(self) -> tuple[str, ...]:
        """The registered names: sorted, or in registration order (see the class docstring)."""
        return tuple(self._items) if self.in_registration_order else tuple(sorted(self._items))

    def items(self) -> tuple[tuple[str, T], ...]:
        """(name, implementation) pairs, in the order of `names()`."""
        return tuple((name, self._items[name]) for name in self.names())

    def copy(self) -> Registry[T]:
        """An independent registry holding the same items."""
        clone = copy.copy(self)
        clone._items = dict(self._items)
        return clone

    def __contains__(self, name: object) -> bool:
        return name in self._items

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def __len__(self) -> int:
        return len(self._items)

    def __repr__(self) -> str:
        return f"Registry({self.kind!r}, {list(self.names())})"

    def _known(self) -> str:
        return ", ".join(self.names()) or "(none registered)"
