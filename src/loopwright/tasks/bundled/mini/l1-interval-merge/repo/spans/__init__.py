"""spans: closed numeric intervals and operations on collections of them."""

from spans.interval import Interval

__all__ = ["Interval"]
