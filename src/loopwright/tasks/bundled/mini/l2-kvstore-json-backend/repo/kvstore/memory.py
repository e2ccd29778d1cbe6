"""A backend that keeps everything in a dict."""

from __future__ import annotations

from typing import Any

from kvstore.base import Backend


class MemoryBackend(Backend):
    """Values live in memory and vanish with the object."""

    def __init__(self) -> None:
        self._data: dict[str, Any] = {}

    def _get(self, key: str) -> Any:
        return self._data[key]

    def _set(self, key: str, value: Any) -> None:
        self._data[key] = value

    def _delete(self, key: str) -> None:
        del self._data[key]

    def keys(self) -> list[str]:
        return sorted(self._data)
