import pytest

from spans.interval import Interval


def test_interval_rejects_end_before_start():
    with pytest.raises(ValueError):
        Interval(3, 1)
    assert Interval(2, 2).length == 0


def test_overlaps_counts_touching_endpoints():
    assert Interval(1, 3).overlaps(Interval(2, 5))
    assert Interval(1, 2).overlaps(Interval(2, 3))
    assert not Interval(1, 2).overlaps(Interval(2.5, 3))
