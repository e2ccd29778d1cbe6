"""A backend that keeps everything in one JSON file, rewritten on every change."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from kvstore.base import Backend
from kvstore.errors import CorruptStoreError


class JsonFileBackend(Backend):
    """Values live in a JSON object in `path`.

    The file is read once, when the backend is created, and rewritten atomically (a temporary
    file, then a rename) after each set or delete. A missing file is an empty store; it is only
    created by the first write.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._data: dict[str, Any] = self._load()

    def _load(self) -> dict[str, Any]:
        if not self.path.exists():
            return {}
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise CorruptStoreError(f"{self.path} is not valid JSON: {exc}") from None
        if not isinstance(data, dict):
            raise CorruptStoreError(
                f"{self.path} must hold a JSON object, found {type(data).__name__}"
            )
        return data

    def _save(self) -> None:
        text = json.dumps(self._data, indent=2, sort_keys=True)
        tmp = self.path.with_name(self.path.name + ".tmp")
        tmp.write_text(text + "\n", encoding="utf-8")
        os.replace(tmp, self.path)

    def _get(self, key: str) -> Any:
        return self._data[key]

    def _set(self, key: str, value: Any) -> None:
        json.dumps(value)  # TypeError for values JSON cannot hold, before anything changes
        self._data[key] = value
        self._save()

    def _delete(self, key: str) -> None:
        del self._data[key]
        self._save()

    def keys(self) -> list[str]:
        return sorted(self._data)
