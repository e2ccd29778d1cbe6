"""Writing CSV-style rows: one line of delimited, minimally quoted fields."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["join_row"]


def join_row(fields: Sequence[str], delimiter: str = ",", quote: str = '"') -> str:
    """Join `fields` into one line, quoting a field only when it needs it.

    A field is quoted when it contains `delimiter`, `quote`, a line break, or leading or
    trailing whitespace; quotes inside it are doubled. A row of one empty field is written as
    two quotes, so it differs from the empty row. Raises ValueError for an invalid dialect
    (see `check_dialect`).
    """
    check_dialect(delimiter, quote)
    if len(fields) == 1 and fields[0] == "":
        return quote * 2
    return delimiter.join(_quote_field(field, delimiter, quote) for field in fields)


def check_dialect(delimiter: str, quote: str) -> None:
    """Raise ValueError unless `delimiter` and `quote` are single, different characters."""
    if len(delimiter) != 1 or len(quote) != 1:
        raise ValueError(
            f"delimiter and quote must be single characters, got {delimiter!r} and {quote!r}"
        )
    if delimiter == quote:
        raise ValueError(f"delimiter and quote must differ, both are {delimiter!r}")


def _quote_field(field: str, delimiter: str, quote: str) -> str:
    needs_quotes = (
        delimiter in field
        or quote in field
        or "\n" in field
        or "\r" in field
        or field != field.strip()
    )
    if not needs_quotes:
        return field
    return quote + field.replace(quote, quote * 2) + quote
