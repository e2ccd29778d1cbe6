"""Roman numerals in their standard (canonical) form, for 1 to 3999."""

from __future__ import annotations

__all__ = ["MAX_VALUE", "MIN_VALUE", "to_roman"]

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
