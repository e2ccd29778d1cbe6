"""A small TOML writer for task.toml (the standard library reads TOML but does not write it)."""

from __future__ import annotations

import re
from collections.abc import Mapping

__all__ = ["toml_text"]


def toml_text(data: Mapping[str, object]) -> str:
    """`data` as TOML: scalars and lists first, then tables, then arrays of tables. Handles
    str, bool, int, float, lists of those, and nested mappings; raises TypeError otherwise."""
    lines: list[str] = []
    _table(lines, (), data)
    return "\n".join(lines).lstrip("\n") + "\n"


def _table(lines: list[str], path: tuple[str, ...], data: Mapping[str, object]) -> None:
    tables = {k: v for k, v in data.items() if isinstance(v, Mapping) and not _inline(k, path)}
    arrays = {
        k: v
        for k, v in data.items()
        if isinstance(v, list) and v and all(isinstance(i, Mapping) for i in v)
    }
    if path and any(k not in tables and k not in arrays for k in data):
        lines.append(f"\n[{'.'.join(_key(p) for p in path)}]")
    for key, value in data.items():
        if key not in tables and key not in arrays:
            lines.append(f"{_key(key)} = {_value(value)}")
    for key, value in tables.items():
        assert isinstance(value, Mapping)
        _table(lines, (*path, key), value)
    for key, items in arrays.items():
        assert isinstance(items, list)
        for item in items:
            lines.append(f"\n[[{'.'.join(_key(p) for p in (*path, key))}]]")
            for k, v in item.items():
                lines.append(f"{_key(k)} = {_value(v)}")


def _inline(key: str, path: tuple[str, ...]) -> bool:
    return key == "env" and path == ("environment",)  # env = { NAME = "value" }


def _key(key: str) -> str:
    return key if re.fullmatch(r"[A-Za-z0-9_-]+", key) else _string(key)


def _string(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    escaped = "".join(c if c >= " " or c == "\t" else f"\\u{ord(c):04x}" for c in escaped)
    return f'"{escaped}"'


def _value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, list):
        if not value:
            return "[]"
        return "[\n" + "".join(f"  {_value(v)},\n" for v in value) + "]"
    if isinstance(value, Mapping):
        return "{ " + ", ".join(f"{_key(k)} = {_value(v)}" for k, v in value.items()) + " }"
    raise TypeError(f"cannot write {type(value).__name__} as TOML")
