import pytest

from spans.interval import Interval
from spans.ops import clip, hull


def test_hull_covers_every_interval():
    assert hull([Interval(4, 6), Interval(-1, 0), Interval(2, 3)]) == Interval(-1, 6)
    with pytest.raises(ValueError):
        hull([])


def test_clip_returns_the_overlap_or_none():
    assert clip(Interval(0, 10), 2, 4) == Interval(2, 4)
    assert clip(Interval(0, 3), 2, 8) == Interval(2, 3)
    assert clip(Interval(0, 1), 5, 8) is None
