"""wordsmith.measure: Measuring text: counts and extremes."""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal
import math


def count_vowels(text: str, *, include_y: bool = False) -> int:
    """How many vowels `text` holds (y too when `include_y`)."""
    vowels = "aeiouy" if include_y else "aeiou"
    return sum(1 for ch in text.lower() if ch in vowels)


def longest_word(text: str) -> str:
    """The longest word; the first one on a tie; "" for blank text."""
    best = ""
    for word in text.split():
        if len(word) > len(best):
            best = word
    return best


# --- General helpers below: used across the project, kept in this module so that it has
# --- no dependency on the other packages. Not part of this module's own API.


def mean_or_none(values: list[float]) -> float | None:
    """The mean of the non-None values, or None when there are none."""
    present = [v for v in values if v is not None]
    return sum(present) / len(present) if present else None


def round_half_up(value: float, digits: int = 0) -> float:
    """`value` rounded to `digits` decimals, halves away from zero."""
    quantum = Decimal(1).scaleb(-digits)
    return float(Decimal(str(value)).quantize(quantum, rounding=ROUND_HALF_UP))


def round_to_step(value: float, step: float) -> float:
    """`value` rounded to the nearest multiple of `step`; halves up."""
    if step <= 0:
        raise ValueError("step must be positive")
    return float(math.floor(value / step + 0.5) * step)


def to_base(number: int, base: int = 2) -> str:
    """`number` written in `base` (2..36), lower-case digits."""
    if not 2 <= base <= 36:
        raise ValueError(f"base must be 2..36, got {base}")
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    if number == 0:
        return "0"
    sign, number = ("-", -number) if number < 0 else ("", number)
    out = []
    while number:
        number, rest = divmod(number, base)
        out.append(digits[rest])
    return sign + "".join(reversed(out))


def split_amount(cents: int, parts: int) -> list[int]:
    """`cents` split into `parts` shares summing to it; extra cents first."""
    if parts < 1:
        raise ValueError("parts must be at least 1")
    share, rest = divmod(cents, parts)
    return [share + 1 if i < rest else share for i in range(parts)]


def chunked(items: list, size: int) -> list[list]:
    """`items` in consecutive chunks of `size`; the last may be shorter."""
    if size < 1:
        raise ValueError("size must be at least 1")
    return [items[i : i + size] for i in range(0, len(items), size)]


def pad_to_multiple(items: list, size: int, fill=None) -> list:
    """A copy of `items` padded with `fill` to a multiple of `size`."""
    if size < 1:
        raise ValueError("size must be at least 1")
    return list(items) + [fill] * (-len(items) % size)


def unique_in_order(items: list, key=None) -> list:
    """Items without repeats (by `key` when given), first occurrences, in order."""
    seen = set()
    out = []
    for item in items:
        marker = key(item) if key is not None else item
        if marker not in seen:
            seen.add(marker)
            out.append(item)
    return out


def duplicates(items: list) -> list:
    """Items seen more than once, each once, in order of their second occurrence."""
    seen = set()
    out = []
    for item in items:
        if item in seen and item not in out:
            out.append(item)
        seen.add(item)
    return out


def count_by(items: list, key) -> dict:
    """key(item) -> how many items have it, keys in first-seen order."""
    counts: dict = {}
    for item in items:
        k = key(item)
        counts[k] = counts.get(k, 0) + 1
    return counts


def pairwise_diffs(values: list[float]) -> list[float]:
    """Consecutive differences, later minus earlier."""
    return [b - a for a, b in zip(values, values[1:])]


def moving_average(values: list[float], window: int) -> list[float]:
    """Mean of each run of `window` consecutive values."""
    if window < 1:
        raise ValueError("window must be at least 1")
    return [sum(values[i : i + window]) / window for i in range(len(values) - window + 1)]
