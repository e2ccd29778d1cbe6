"""The Interval value type."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Interval"]


@dataclass(frozen=True, order=True)
class Interval:
    """A closed interval `[start, end]` of real numbers.

    Invariant: `start <= end`. A zero-length interval (`start == end`) is a single point.
    Instances are immutable and order by `(start, end)`.
    """

    start: float
    end: float

    def __post_init__(self) -> None:
        if self.end < self.start:
            raise ValueError(
                f"interval end {self.end} is before its start {self.start}; "
                f"write Interval({self.end}, {self.start}) instead"
            )

    @property
    def length(self) -> float:
        return self.end - self.start

    def contains(self, value: float) -> bool:
        """True when `value` lies in the interval, endpoints included."""
        return self.start <= value <= self.end

    def overlaps(self, other: Interval) -> bool:
        """True when the two intervals share at least one point (touching endpoints count)."""
        return self.start <= other.end and other.start <= self.end

    def __str__(self) -> str:
        return f"[{self.start}, {self.end}]"
