"""seqkit.window: Sliding windows over sequences."""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal
import math
import re


def pairwise_diffs(values: list[float]) -> list[float]:
    """Consecutive differences, later minus earlier."""
    return [b - a for a, b in zip(values, values[1:])]


def moving_average(values: list[float], window: int) -> list[float]:
    """Mean of each run of `window` consecutive values."""
    if window < 1:
        raise ValueError("window must be at least 1")
    return [sum(values[i : i + window]) / window for i in range(len(values) - window + 1)]


# --- General helpers below: used across the project, kept in this module so that it has
# --- no dependency on the other packages. Not part of this module's own API.


def collapse_spaces(text: str) -> str:
    """Every run of whitespace becomes one space; the ends are stripped."""
    return " ".join(text.split())


def longest_word(text: str) -> str:
    """The longest word; the first one on a tie; "" for blank text."""
    best = ""
    for word in text.split():
        if len(word) > len(best):
            best = word
    return best


def split_pairs(text: str, sep: str = ",") -> dict[str, str]:
    """'k=v,k2=v2' -> dict; empty items skipped; ValueError on an item without '='."""
    pairs = {}
    for item in text.split(sep):
        if not item.strip():
            continue
        if "=" not in item:
            raise ValueError(f"not a key=value item: {item!r}")
        key, value = item.split("=", 1)
        pairs[key.strip()] = value.strip()
    return pairs


def center_text(text: str, width: int, fill: str = " ") -> str:
    """`text` centred in `width` columns; extra padding on the right."""
    if len(fill) != 1:
        raise ValueError("fill must be one character")
    total = max(width - len(text), 0)
    left = total // 2
    return fill * left + text + fill * (total - left)


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


def split_amount(cents: int, parts: int) -> list[int]:
    """`cents` split into `parts` shares summing to it; extra cents first."""
    if parts < 1:
        raise ValueError("parts must be at least 1")
    share, rest = divmod(cents, parts)
    return [share + 1 if i < rest else share for i in range(parts)]
