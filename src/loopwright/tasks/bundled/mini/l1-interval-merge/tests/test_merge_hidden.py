import random

import pytest

# merge is looked up on the module so that, while it is missing, each test fails on its own
# instead of the whole file failing to import.
from spans import ops
from spans.interval import Interval as I

CASES = [
    ([], []),
    ([I(1, 2)], [I(1, 2)]),
    ([I(1, 2), I(4, 5)], [I(1, 2), I(4, 5)]),
    ([I(1, 3), I(2, 5)], [I(1, 5)]),
    ([I(1, 2), I(2, 3)], [I(1, 3)]),
    ([I(0, 10), I(2, 3)], [I(0, 10)]),
    ([I(5, 6), I(1, 2), I(1.5, 3)], [I(1, 3), I(5, 6)]),
    ([I(1, 3), I(2, 4), I(4, 6), I(8, 9)], [I(1, 6), I(8, 9)]),
    ([I(3, 3)], [I(3, 3)]),
    ([I(1, 3), I(2, 2)], [I(1, 3)]),
    ([I(-2.5, -1), I(-1, 0.5)], [I(-2.5, 0.5)]),
]
CASE_IDS = [
    "empty list",
    "one [item]",
    "disjoint [1, 2] [4, 5]",
    "overlapping [1, 3] [2, 5]",
    "touching [1, 2] [2, 3]",
    "nested [0, 10] [2, 3]",
    "unsorted input",
    "chain of overlaps",
    "point [3, 3] alone",
    "point [2, 2] inside [1, 3]",
    "negative and float bounds",
]


@pytest.mark.parametrize(("given", "expected"), CASES, ids=CASE_IDS)
def test_merge(given, expected):
    assert ops.merge(given) == expected


def test_merge_accepts_any_iterable():
    generated = (I(n, n + 1) for n in (6, 0, 3, 1))
    assert ops.merge(generated) == [I(0, 2), I(3, 4), I(6, 7)]


def test_merge_does_not_modify_its_input():
    given = [I(4, 8), I(1, 5), I(10, 11)]
    snapshot = list(given)
    ops.merge(given)
    assert given == snapshot


def test_merge_rejects_items_that_are_not_intervals():
    with pytest.raises(TypeError):
        ops.merge([I(1, 2), (3, 4)])


def test_merged_result_is_sorted_disjoint_and_covers_the_input():
    rng = random.Random(20240611)
    given = []
    for _ in range(200):
        start = rng.randint(0, 500)
        given.append(I(start, start + rng.choice([0, 0, 1, 2, 5, 13])))
    merged = ops.merge(given)
    for left, right in zip(merged, merged[1:]):
        assert left.end < right.start
    for item in given:
        assert any(m.start <= item.start and item.end <= m.end for m in merged)
    for m in merged:
        assert any(item.start == m.start for item in given)
        assert any(item.end == m.end for item in given)
