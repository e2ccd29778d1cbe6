"""Option values the commands share a reading of: comma-separated id lists."""

from __future__ import annotations

from collections.abc import Iterable

from loopwright.errors import UsageError

__all__ = ["id_list"]


def id_list(texts: str | Iterable[str] | None, flag: str) -> list[str] | None:
    """`--tasks a,b` (or a repeated option's values) -> ["a", "b"]; None when the option was not
    given. An option given with no id in it (`--tasks ''`, `--tasks ,,,`) is a UsageError naming
    `flag`, never a silent "all": leaving the option out is how to ask for everything."""
    if texts is None:
        return None
    items = [texts] if isinstance(texts, str) else list(texts)
    if not items:
        return None
    ids = [i.strip() for item in items for i in item.split(",") if i.strip()]
    if not ids:
        shown = ", ".join(repr(item) for item in items)
        raise UsageError(
            f"{flag} names no id",
            got=shown,
            fix=f"pass comma-separated ids (e.g. {flag} l1-slugify,l1-csv-row), "
            f"or leave {flag} out for all of them",
        )
    return ids
