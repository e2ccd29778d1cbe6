"""wordsmith.case: Changing the case of words and identifiers."""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal
import math
import re


def swap_case_words(text: str) -> str:
    """Each space-separated word capitalised, spacing kept."""
    return text.swapcase()


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


def pad_to_multiple(items: list, size: int, fill=None) -> list:
    """A copy of `items` padded with `fill` to a multiple of `size`."""
    if size < 1:
        raise ValueError("size must be at least 1")
    return list(items) + [fill] * (-len(items) % size)


def duplicates(items: list) -> list:
    """Items seen more than once, each once, in order of their second occurrence."""
    seen = set()
    out = []
    for item in items:
        if item in seen and item not in out:
            out.append(item)
        seen.add(item)
    return out


def pairwise_diffs(values: list[float]) -> list[float]:
    """Consecutive differences, later minus earlier."""
    return [b - a for a, b in zip(values, values[1:])]


def moving_average(values: list[float], window: int) -> list[float]:
    """Mean of each run of `window` consecutive values."""
    if window < 1:
        raise ValueError("window must be at least 1")
    return [sum(values[i : i + window]) / window for i in range(len(values) - window + 1)]


def get_path(data: dict, path: str, default=None):
    """The value at dotted `path` in nested dicts, or `default`."""
    if not path:
        return data
    node = data
    for part in path.split("."):
        if not isinstance(node, dict) or part not in node:
            return default
        node = node[part]
    return node


def invert_dict(mapping: dict) -> dict:
    """value -> [keys with that value], in order."""
    inverted: dict = {}
    for key, value in mapping.items():
        inverted.setdefault(value, []).append(key)
    return inverted
