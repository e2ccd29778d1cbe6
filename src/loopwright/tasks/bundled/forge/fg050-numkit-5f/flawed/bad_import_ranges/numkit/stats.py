"""numkit.stats: Summary statistics over lists of numbers."""

from __future__ import annotations


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
