"""Fitting text into a fixed width."""

from __future__ import annotations

__all__ = ["truncate", "wrap"]


def wrap(text: str, width: int) -> list[str]:
    """Greedily wrap `text` into lines of at most `width` characters.

    Words are split on whitespace; a word longer than `width` gets a line of its own (it is
    never broken). Raises ValueError when `width` is less than 1.
    """
    if width < 1:
        raise ValueError(f"width must be at least 1, got {width}")
    lines: list[str] = []
    current = ""
    for word in text.split():
        if not current:
            current = word
        elif len(current) + 1 + len(word) <= width:
            current += " " + word
        else:
            lines.append(current)
            current = word
    if current:
        lines.append(current)
    return lines


def truncate(text: str, width: int, ellipsis: str = "…") -> str:
    """Shorten `text` to at most `width` characters, ending with `ellipsis` when cut.

    Raises ValueError when `width` is shorter than the ellipsis itself.
    """
    if width < len(ellipsis):
        raise ValueError(f"width {width} is shorter than the ellipsis {ellipsis!r}")
    if len(text) <= width:
        return text
    return text[: width - len(ellipsis)].rstrip() + ellipsis
