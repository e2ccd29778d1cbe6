"""wordsmith.case: Changing the case of words and identifiers."""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal
import math
import re


def swap_case_words(text: str) -> str:
    """Each space-separated word capitalised, spacing kept."""
    return " ".join(word[:1].upper() + word[1:].lower() for word in text.split(" "))


def camel_to_snake(name: str) -> str:
    """camelCase / PascalCase -> snake_case; capital runs are one word."""
    name = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", name)
    name = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name)
    return name.lower()


# --- General helpers below: used across the project, kept in this module so that it has
# --- no dependency on the other packages. Not part of this module's own API.


def mean_or_none(values: list[float]) -> float | None:
    """The mean of the non-None values, or None when there are none."""
    present = [v for v in values if v is not None]
    return sum(present) / len(present) if present else None


def median(values: list[float]) -> float:
    """The median; the mean of the middle two for an even count; ValueError when empty."""
    if not values:
        raise ValueError("median of an empty list")
    ordered = sorted(values)
    mid = len(ordered) // 2
    if len(ordered) % 2:
        return float(ordered[mid])
    return (ordered[mid - 1] + ordered[mid]) / 2


def round_half_up(value: float, digits: int = 0) -> float:
    """`value` rounded to `digits` decimals, halves away from zero."""
    quantum = Decimal(1).scaleb(-digits)
    return float(Decimal(str(value)).quantize(quantum, rounding=ROUND_HALF_UP))


def round_to_step(value: float, step: float) -> float:
    """`value` rounded to the nearest multiple of `step`; halves up."""
    if step <= 0:
        raise ValueError("step must be positive")
    return float(math.floor(value / step + 0.5) * step)


def clamp(value: float, low: float, high: float) -> float:
    """`value` limited to [low, high]; ValueError when low > high."""
    if low > high:
        raise ValueError(f"low {low} is above high {high}")
    return max(low, min(value, high))


def overlap(a: tuple[int, int], b: tuple[int, int]) -> int:
    """How many integers the half-open ranges a and b share."""
    return max(0, min(a[1], b[1]) - max(a[0], b[0]))


def parse_percent(text: str) -> float:
    """'12.5%' -> 0.125; ValueError unless it is a number followed by %."""
    stripped = text.strip()
    if not stripped.endswith("%"):
        raise ValueError(f"not a percentage: {text!r}")
    return float(stripped[:-1].strip()) / 100


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


def moving_average(values: list[float], window: int) -> list[float]:
    """Mean of each run of `window` consecutive values."""
    if window < 1:
        raise ValueError("window must be at least 1")
    return [sum(values[i : i + window]) / window for i in range(len(values) - window + 1)]
