"""A fixed-capacity FIFO ring buffer."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Generic, TypeVar

__all__ = ["RingBuffer"]

T = TypeVar("T")


class RingBuffer(Generic[T]):
    """Holds at most `capacity` items; appending to a full buffer overwrites the oldest item.

    Iteration goes from the oldest item to the newest. Items live in a fixed list of slots;
    `_start` is the slot of the oldest item and `_size` the number of items held.
    """

    def __init__(self, capacity: int) -> None:
        self._slots: list[T | None] = [None] * _checked_capacity(capacity)
        self._start = 0
        self._size = 0

    @property
    def capacity(self) -> int:
        return len(self._slots)

    @property
    def is_full(self) -> bool:
        return self._size == len(self._slots)

    def __len__(self) -> int:
        return self._size

    def __iter__(self) -> Iterator[T]:
        for offset in range(self._size):
            yield self._slots[(self._start + offset) % len(self._slots)]  # type: ignore[misc]

    def __repr__(self) -> str:
        return f"RingBuffer(capacity={self.capacity}, items={list(self)!r})"

    def append(self, item: T) -> T | None:
        """Add `item` as the newest item; return the item it overwrote, or None."""
        end = (self._start + self._size) % len(self._slots)
        if self.is_full:
            evicted = self._slots[end]
            self._slots[end] = item
            self._start = (self._start + 1) % len(self._slots)
            return evicted
        self._slots[end] = item
        self._size += 1
        return None

    def extend(self, items: Iterable[T]) -> None:
        """Append every item of `items` in order."""
        for item in items:
            self.append(item)

    def oldest(self) -> T:
        """The oldest item. Raises IndexError when the buffer is empty."""
        if not self._size:
            raise IndexError("oldest() on an empty RingBuffer")
        return self._slots[self._start]  # type: ignore[return-value]

    def newest(self) -> T:
        """The newest item. Raises IndexError when the buffer is empty."""
        if not self._size:
            raise IndexError("newest() on an empty RingBuffer")
        return self._slots[(self._start + self._size - 1) % len(self._slots)]  # type: ignore[return-value]

    def clear(self) -> None:
        """Remove every item; the capacity is unchanged."""
        self._slots = [None] * len(self._slots)
        self._start = 0
        self._size = 0


def _checked_capacity(capacity: int) -> int:
    if isinstance(capacity, bool) or not isinstance(capacity, int):
        raise TypeError(f"capacity must be an int, got {type(capacity).__name__}")
    if capacity < 1:
        raise ValueError(f"capacity must be at least 1, got {capacity}")
    return capacity
