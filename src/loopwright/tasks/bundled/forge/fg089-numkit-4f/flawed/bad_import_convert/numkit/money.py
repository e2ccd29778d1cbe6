"""numkit.money: Amounts of money held as integer cents."""

from __future__ import annotations


def split_amount(cents: int, parts: int) -> list[int]:
    """`cents` split into `parts` shares summing to it; extra cents first."""
    if parts < 1:
        raise ValueError("parts must be at least 1")
    share, rest = divmod(cents, parts)
    return [share + 1 if i < rest else share for i in range(parts)]


def format_cents(cents: int, symbol: str = "$") -> str:
    """123456 -> '$1,234.56'; '-$5.00' for negatives."""
    sign = "-" if cents < 0 else ""
    dollars, rest = divmod(abs(cents), 100)
    return f"{sign}{symbol}{dollars:,}.{rest:02d}"
