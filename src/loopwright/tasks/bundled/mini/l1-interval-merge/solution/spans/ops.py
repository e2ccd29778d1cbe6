"""Operations on collections of intervals."""

from __future__ import annotations

from collections.abc import Iterable

from spans.interval import Interval

__all__ = ["clip", "hull", "merge"]


def hull(intervals: Iterable[Interval]) -> Interval:
    """The smallest interval containing every interval in `intervals`.

    Raises ValueError when `intervals` is empty.
    """
    items = list(intervals)
    if not items:
        raise ValueError("hull() of no intervals is undefined; pass at least one Interval")
    return Interval(min(i.start for i in items), max(i.end for i in items))


def clip(interval: Interval, low: float, high: float) -> Interval | None:
    """The part of `interval` inside `[low, high]`, or None when they do not meet.

    Raises ValueError when `high < low`.
    """
    bounds = Interval(low, high)
    if not interval.overlaps(bounds):
        return None
    return Interval(max(interval.start, low), min(interval.end, high))


def merge(intervals: Iterable[Interval]) -> list[Interval]:
    """Merge overlapping and touching intervals into a sorted list of disjoint intervals.

    `intervals` may be any iterable, in any order; it is not modified. Intervals that share at
    least one point (including touching endpoints, like [1, 2] and [2, 3]) become one interval.
    Zero-length intervals are kept as points unless another interval covers them. The result
    is sorted by start, and no two of its intervals touch.

    Raises TypeError when an item is not an Interval. Deterministic.
    """
    items = list(intervals)
    for item in items:
        if not isinstance(item, Interval):
            raise TypeError(f"merge() takes Interval objects, got {type(item).__name__} {item!r}")
    merged: list[Interval] = []
    for current in sorted(items):
        if merged and current.start <= merged[-1].end:
            last = merged[-1]
            merged[-1] = Interval(last.start, max(last.end, current.end))
        else:
            merged.append(current)
    return merged
