"""CSV-style rows: one line of delimited, minimally quoted fields."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["join_row", "split_row"]


def join_row(fields: Sequence[str], delimiter: str = ",", quote: str = '"') -> str:
    """Join `fields` into one line, quoting a field only when it needs it.

    A field is quoted when it contains `delimiter`, `quote`, a line break, or leading or
    trailing whitespace; quotes inside it are doubled. Raises ValueError for an invalid dialect
    (see `check_dialect`).
    """
    check_dialect(delimiter, quote)
    return delimiter.join(_quote_field(field, delimiter, quote) for field in fields)


def split_row(line: str, delimiter: str = ",", quote: str = '"') -> list[str]:
    """Split one CSV-style line into its fields; the inverse of `join_row`.

    A field that starts with `quote` is quoted: it runs to the next single quote, a doubled
    quote inside it stands for one quote, and delimiters and line breaks inside it are
    literal. Elsewhere quotes are ordinary characters. Whitespace is kept. The empty line has
    no fields. Raises ValueError for an invalid dialect (see `check_dialect`), an unterminated
    quoted field, or text between a closing quote and the next delimiter.
    """
    check_dialect(delimiter, quote)
    if not line:
        return []
    fields = []
    position = 0
    while True:
        if line.startswith(quote, position):
            field, position = _read_quoted(line, position + 1, delimiter, quote)
        else:
            end = line.find(delimiter, position)
            end = len(line) if end == -1 else end
            field, position = line[position:end], end
        fields.append(field)
        if position == len(line):
            return fields
        position += 1  # line[position] is the delimiter ending this field


def _read_quoted(line: str, start: int, delimiter: str, quote: str) -> tuple[str, int]:
    """Read the quoted field whose text begins at `start`; return it and the index after it."""
    parts = []
    position = start
    while True:
        closing = line.find(quote, position)
        if closing == -1:
            raise ValueError(
                f"{line!r}: the quoted field opened at index {start - 1} is never closed"
            )
        parts.append(line[position:closing])
        if line.startswith(quote, closing + 1):
            parts.append(quote)
            position = closing + 2
            continue
        after = closing + 1
        if after < len(line) and line[after] != delimiter:
            raise ValueError(
                f"{line!r}: unexpected {line[after]!r} after the closing quote at index {closing}"
            )
        return "".join(parts), after


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
