"""Operations on collections of intervals."""

from __future__ import annotations

from collections.abc import Iterable

from spans.interval import Interval

__all__ = ["clip", "hull"]


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
