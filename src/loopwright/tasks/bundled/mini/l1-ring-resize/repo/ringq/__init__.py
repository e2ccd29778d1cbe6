"""ringq: a fixed-capacity ring buffer and sliding-window statistics."""

from ringq.buffer import RingBuffer

__all__ = ["RingBuffer"]
