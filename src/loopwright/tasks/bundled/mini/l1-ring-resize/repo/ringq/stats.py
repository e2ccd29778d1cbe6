"""Sliding-window statistics over a stream of numbers."""

from __future__ import annotations

from collections.abc import Iterable

from ringq.buffer import RingBuffer

__all__ = ["moving_average", "rolling_max"]


def moving_average(values: Iterable[float], window: int) -> list[float]:
    """The mean of each full window of `window` consecutive values, in order.

    Fewer values than `window` give an empty list. Raises ValueError when `window` < 1.
    """
    buffer: RingBuffer[float] = RingBuffer(window)
    averages = []
    for value in values:
        buffer.append(value)
        if buffer.is_full:
            averages.append(sum(buffer) / window)
    return averages


def rolling_max(values: Iterable[float], window: int) -> list[float]:
    """The maximum of the last `window` values at each position (shorter at the start)."""
    buffer: RingBuffer[float] = RingBuffer(window)
    maxima = []
    for value in values:
        buffer.append(value)
        maxima.append(max(buffer))
    return maxima
