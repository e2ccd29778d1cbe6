"""Turning text fields into Python scalars."""

from __future__ import annotations

__all__ = ["coerce"]

_BOOLEANS = {"true": True, "false": False}


def coerce(value: str) -> int | float | bool | str | None:
    """The most specific scalar `value` spells: "" -> None, "true" -> True, "7" -> 7,
    "2.5" -> 2.5, anything else -> the string unchanged. Booleans are case-insensitive.
    """
    if value == "":
        return None
    if value.lower() in _BOOLEANS:
        return _BOOLEANS[value.lower()]
    for convert in (int, float):
        try:
            return convert(value)
        except ValueError:
            pass
    return value
