# merge is looked up on the module so that, while it is missing, each test fails on its own
# instead of the whole file failing to import.
from spans import ops
from spans.interval import Interval


def test_merge_joins_overlapping_intervals():
    given = [Interval(1, 3), Interval(2, 6), Interval(8, 10)]
    assert ops.merge(given) == [Interval(1, 6), Interval(8, 10)]
