"""seqkit.window: Sliding windows over sequences."""

from __future__ import annotations


def pairwise_diffs(values: list[float]) -> list[float]:
    """Consecutive differences, later minus earlier."""
    return [b - a for a, b in zip(values, values[1:])]
