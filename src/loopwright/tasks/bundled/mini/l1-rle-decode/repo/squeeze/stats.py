"""Measurements of how well text run-length encodes."""

from __future__ import annotations

from squeeze.rle import encode, runs

__all__ = ["compression_ratio", "longest_run"]


def compression_ratio(text: str) -> float:
    """len(encode(text)) / len(text): below 1.0 when encoding saves space.

    Raises ValueError for empty text (the ratio is undefined) or text with ASCII digits.
    """
    if not text:
        raise ValueError("compression_ratio() of empty text is undefined")
    return len(encode(text)) / len(text)


def longest_run(text: str) -> tuple[str, int] | None:
    """The first longest (character, length) run in `text`, or None for empty text."""
    grouped = runs(text)
    if not grouped:
        return None
    return max(grouped, key=lambda pair: pair[1])
