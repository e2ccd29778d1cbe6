"""Run-length encoding: "aaabcc" <-> "3ab2c".

Encoded text is a sequence of tokens, each an optional repeat count (ASCII digits, no
leading zero) followed by exactly one character. A token without a count stands for one
character. Because ASCII digits are counts, they cannot be encoded.
"""

from __future__ import annotations

import re
from itertools import groupby

__all__ = ["DIGITS", "decode", "encode", "runs"]

DIGITS = frozenset("0123456789")
_TOKEN = re.compile(r"([1-9][0-9]*)?([^0-9])")


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

    Each token is an optional count (ASCII digits, no leading zero; "1a" is allowed) and one
    character, which may be any character but an ASCII digit. Raises ValueError for a zero or
    zero-padded count and for a count with no character after it. Inverse of `encode`.
    """
    pieces = []
    position = 0
    while position < len(encoded):
        token = _TOKEN.match(encoded, position)
        if token is None:
            raise ValueError(_decode_error(encoded, position))
        count, char = token.groups()
        pieces.append(char * int(count or 1))
        position = token.end()
    return "".join(pieces)


def _decode_error(encoded: str, position: int) -> str:
    if encoded[position] == "0":
        return f"{encoded!r}: count at index {position} is zero or has a leading zero"
    return f"{encoded!r}: count at index {position} has no character after it"
