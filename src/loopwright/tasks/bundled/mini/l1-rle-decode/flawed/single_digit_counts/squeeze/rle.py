"""Run-length encoding: "aaabcc" <-> "3ab2c".

Encoded text is a sequence of tokens, each an optional repeat count (ASCII digits, no
leading zero) followed by exactly one character. A token without a count stands for one
character. Because ASCII digits are counts, they cannot be encoded.
"""

from __future__ import annotations

from itertools import groupby

__all__ = ["DIGITS", "decode", "encode", "runs"]

DIGITS = frozenset("0123456789")


def runs(text: str) -> list[tuple[str, int]]:
    """Group `text` into (character, run length) pairs: "aaab" -> [("a", 3), ("b", 1)]."""
    return [(char, len(list(group))) for char, group in groupby(text)]


def encode(text: str) -> str:
    """Run-length encode `text`: "aaabcc" -> "3ab2c"; "" -> "".

    Raises ValueError when `text` contains an ASCII digit (it would decode as a count).
    Deterministic.
    """
    digits = sorted(DIGITS.intersection(text))
    if digits:
        raise ValueError(
            f"cannot run-length encode ASCII digits {digits}: they are reserved for counts"
        )
    return "".join(char if count == 1 else f"{count}{char}" for char, count in runs(text))


def decode(encoded: str) -> str:
    """Expand run-length encoded text: "3ab2c" -> "aaabcc"; "" -> "".

    Raises ValueError for a zero count and for a count with no character after it.
    """
    pieces = []
    count = None
    for char in encoded:
        if count is None and char in DIGITS:
            count = int(char)
            if count == 0:
                raise ValueError(f"{encoded!r}: zero count")
        else:
            pieces.append(char * (1 if count is None else count))
            count = None
    if count is not None:
        raise ValueError(f"{encoded!r}: count at the end has no character after it")
    return "".join(pieces)
