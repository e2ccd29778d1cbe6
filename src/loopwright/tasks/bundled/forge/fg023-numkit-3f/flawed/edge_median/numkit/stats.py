"""numkit.stats: Summary statistics over lists of numbers."""

from __future__ import annotations


def mean_or_none(values: list[float]) -> float | None:
    """The mean of the non-None values, or None when there are none."""
    present = [v for v in values if v is not None]
    return sum(present) / len(present) if present else None


def median(values: list[float]) -> float:
    """The median; the mean of the middle two for an even count; ValueError when empty."""
    ordered = sorted(values)
    return float(ordered[len(ordered) // 2])
