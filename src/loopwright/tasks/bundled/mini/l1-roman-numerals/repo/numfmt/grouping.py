"""Digit grouping and ordinal suffixes."""

from __future__ import annotations

__all__ = ["ordinal", "thousands"]


def thousands(number: int, sep: str = ",") -> str:
    """Format `number` with `sep` between groups of three digits: 1234567 -> "1,234,567"."""
    sign = "-" if number < 0 else ""
    digits = str(abs(number))
    groups = []
    while digits:
        groups.append(digits[-3:])
        digits = digits[:-3]
    return sign + sep.join(reversed(groups))


def ordinal(number: int) -> str:
    """English ordinal of a non-negative integer: 1 -> "1st", 12 -> "12th", 23 -> "23rd".

    Raises ValueError for negative numbers.
    """
    if number < 0:
        raise ValueError(f"ordinal() takes a non-negative integer, got {number}")
    if number % 100 in (11, 12, 13):
        suffix = "th"
    else:
        suffix = {1: "st", 2: "nd", 3: "rd"}.get(number % 10, "th")
    return f"{number}{suffix}"
