"""The interface every backend implements."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

from kvstore.errors import MissingKeyError

_NO_DEFAULT = object()


class Backend(ABC):
    """A mapping from string keys to values.

    Subclasses implement the four primitives `_get`, `_set`, `_delete` and `keys`; this class
    adds key checking, defaults and the conveniences built on them.
    """

    @abstractmethod
    def _get(self, key: str) -> Any:
        """The value stored under `key`; raise KeyError when there is none."""

    @abstractmethod
    def _set(self, key: str, value: Any) -> None:
        """Store `value` under `key`."""

    @abstractmethod
    def _delete(self, key: str) -> None:
        """Remove `key`; raise KeyError when it is absent."""

    @abstractmethod
    def keys(self) -> list[str]:
        """Every key, sorted."""

    def get(self, key: str, default: Any = _NO_DEFAULT) -> Any:
        """The value under `key`, else `default`, else MissingKeyError."""
        _check_key(key)
        try:
            return self._get(key)
        except KeyError:
            if default is _NO_DEFAULT:
                raise MissingKeyError(key) from None
            return default

    def set(self, key: str, value: Any) -> None:
        _check_key(key)
        self._set(key, value)

    def delete(self, key: str) -> None:
        """Remove `key`; MissingKeyError when it is absent."""
        _check_key(key)
        try:
            self._delete(key)
        except KeyError:
            raise MissingKeyError(key) from None

    def items(self) -> list[tuple[str, Any]]:
        return [(key, self._get(key)) for key in self.keys()]

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and key in self.keys()

    def __len__(self) -> int:
        return len(self.keys())


def _check_key(key: object) -> None:
    if not isinstance(key, str) or not key:
        raise TypeError(f"keys must be non-empty strings, got {key!r}")
