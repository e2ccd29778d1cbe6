import importlib

import pytest


def _module(name):
    # looked up per test, so that one module failing to import fails only its own tests
    return importlib.import_module("seqkit." + name)


def test_pad_to_multiple_main():
    assert _module("chunks").pad_to_multiple([1, 2, 3], 4) == [1, 2, 3, None]
    assert _module("chunks").pad_to_multiple(['a'], 3, fill='-') == ['a', '-', '-']


def test_pad_to_multiple_edge_1():
    assert _module("chunks").pad_to_multiple([1, 2], 2) == [1, 2]


def test_pad_to_multiple_edge_2():
    assert _module("chunks").pad_to_multiple([], 3) == []


def test_pad_to_multiple_edge_3():
    with pytest.raises(ValueError):
        _module("chunks").pad_to_multiple([1], 0)


def test_duplicates_main():
    assert _module("dedupe").duplicates([1, 2, 1, 3, 2]) == [1, 2]
    assert _module("dedupe").duplicates(['b', 'a', 'a', 'b']) == ['a', 'b']


def test_duplicates_edge_1():
    assert _module("dedupe").duplicates([5, 5, 5]) == [5]


def test_duplicates_edge_2():
    assert _module("dedupe").duplicates([1, 2, 3]) == []


def test_duplicates_edge_3():
    assert _module("dedupe").duplicates([]) == []


def test_count_by_main():
    assert _module("group").count_by(['a', 'bb', 'cc', 'd'], len) == {1: 2, 2: 2}


def test_count_by_edge_1():
    assert list(_module("group").count_by([1, 2, 2, 3, 3, 3], lambda n: n).items()) == list(({1: 1, 2: 2, 3: 3}).items())


def test_count_by_edge_2():
    assert _module("group").count_by([], len) == {}


def test_pairwise_diffs_main():
    assert _module("window").pairwise_diffs([1, 4, 9]) == [3, 5]
    assert _module("window").pairwise_diffs([5, 3, 3]) == [-2, 0]


def test_pairwise_diffs_edge_1():
    assert _module("window").pairwise_diffs([7]) == []


def test_pairwise_diffs_edge_2():
    assert _module("window").pairwise_diffs([]) == []


def test_chunked_unchanged():
    assert _module("chunks").chunked([1, 2, 3, 4], 2) == [[1, 2], [3, 4]]
    assert _module("chunks").chunked(list('abcdef'), 3) == [['a', 'b', 'c'], ['d', 'e', 'f']]


def test_unique_in_order_unchanged():
    assert _module("dedupe").unique_in_order([3, 1, 3, 2, 1]) == [3, 1, 2]
    assert _module("dedupe").unique_in_order(list('banana')) == ['b', 'a', 'n']


def test_group_by_unchanged():
    assert _module("group").group_by(['apple', 'avocado', 'banana'], key=lambda s: s[0]) == {'a': ['apple', 'avocado'], 'b': ['banana']}


def test_moving_average_unchanged():
    assert _module("window").moving_average([1, 2, 3, 4], 2) == [1.5, 2.5, 3.5]
    assert _module("window").moving_average([2, 4, 6], 3) == [4.0]
