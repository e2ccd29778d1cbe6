"""Roman numerals in their standard (canonical) form, for 1 to 3999."""

from __future__ import annotations

__all__ = ["MAX_VALUE", "MIN_VALUE", "from_roman", "to_roman"]

MIN_VALUE = 1
MAX_VALUE = 3999

# Largest first; the subtractive pairs are listed so that a greedy walk produces canonical form.
_SYMBOLS = (
    (1000, "M"),
    (900, "CM"),
    (500, "D"),
    (400, "CD"),
    (100, "C"),
    (90, "XC"),
    (50, "L"),
    (40, "XL"),
    (10, "X"),
    (9, "IX"),
    (5, "V"),
    (4, "IV"),
    (1, "I"),
)
# TODO: L, C, D and M.
_VALUES = {"I": 1, "V": 5, "X": 10}


def to_roman(number: int) -> str:
    """The canonical upper-case Roman numeral for `number`: 1994 -> "MCMXCIV".

    Raises TypeError when `number` is not an int (bool included) and ValueError when it is
    outside 1..3999.
    """
    if isinstance(number, bool) or not isinstance(number, int):
        raise TypeError(f"to_roman() takes an int, got {type(number).__name__}")
    if not MIN_VALUE <= number <= MAX_VALUE:
        raise ValueError(f"{number} is outside the Roman numeral range {MIN_VALUE}..{MAX_VALUE}")
    parts = []
    for value, symbol in _SYMBOLS:
        count, number = divmod(number, value)
        parts.append(symbol * count)
    return "".join(parts)


def from_roman(numeral: str) -> int:
    """The value of a canonical Roman numeral, in any letter case: "MCMXCIV" -> 1994.

    Only the form `to_roman` produces is accepted, so `from_roman(to_roman(n)) == n` and
    "IIII", "IC" or "VV" are rejected.

    Raises TypeError when `numeral` is not a str, and ValueError when it is empty, holds a
    character other than I V X L C D M (whitespace included), is not in canonical form, or is
    outside 1..3999.
    """
    if not isinstance(numeral, str):
        raise TypeError(f"from_roman() takes a str, got {type(numeral).__name__}")
    text = numeral.upper()
    if not text:
        raise ValueError("from_roman() got an empty string; expected a numeral such as 'XIV'")
    unknown = sorted(set(text) - _VALUES.keys())
    if unknown:
        raise ValueError(f"{numeral!r} contains non-Roman characters {unknown}")
    total = _additive_value(text)
    if not MIN_VALUE <= total <= MAX_VALUE or to_roman(total) != text:
        raise ValueError(f"{numeral!r} is not a Roman numeral in canonical form")
    return total


def _additive_value(text: str) -> int:
    """Sum the symbols, subtracting each one that stands before a larger one."""
    total = 0
    for symbol, following in zip(text, text[1:] + " "):
        value = _VALUES[symbol]
        total += -value if _VALUES.get(following, 0) > value else value
    return total
