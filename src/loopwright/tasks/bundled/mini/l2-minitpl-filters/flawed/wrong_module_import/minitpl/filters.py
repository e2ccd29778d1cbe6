"""The filter registry and the built-in filters.

A filter is a function called with the value (and the filter's argument, when the template
gives one): `{{ name | truncate:5 }}` calls `truncate(value, 5)`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from minitpl.errors import UnknownFilterError

Filter = Callable[..., Any]

FILTERS: dict[str, Filter] = {}
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def register_filter(name: str, func: Filter | None = None) -> Any:
    """Register `func` as the filter `name` and return it; without `func`, a decorator.

    Registering a name again replaces the previous filter. ValueError for names that are not
    identifiers.
    """
    if not _NAME.fullmatch(name):
        raise ValueError(f"a filter name must be an identifier, got {name!r}")

    def register(f: Filter) -> Filter:
        FILTERS[name] = f
        return f

    return register if func is None else register(func)


def get_filter(name: str) -> Filter:
    """The filter registered as `name`; UnknownFilterError if there is none."""
    try:
        return FILTERS[name]
    except KeyError:
        raise UnknownFilterError(f"unknown filter {name!r}") from None


@register_filter("upper")
def upper(value: Any) -> str:
    return str(value).upper()


@register_filter("lower")
def lower(value: Any) -> str:
    return str(value).lower()


@register_filter("title")
def title(value: Any) -> str:
    return str(value).title()


@register_filter("trim")
def trim(value: Any) -> str:
    return str(value).strip()


@register_filter("length")
def length(value: Any) -> int:
    return len(value)


@register_filter("truncate")
def truncate(value: Any, size: int) -> str:
    """At most `size` characters, then "..." when something was cut."""
    text = str(value)
    return text if len(text) <= size else text[:size] + "..."


@register_filter("join")
def join(value: Any, separator: str = ", ") -> str:
    return separator.join(str(item) for item in value)


@register_filter("default")
def default(value: Any, fallback: Any = "") -> Any:
    """`fallback` when the value is None or "" (or undefined: see render.Template)."""
    return fallback if value is None or value == "" else value
