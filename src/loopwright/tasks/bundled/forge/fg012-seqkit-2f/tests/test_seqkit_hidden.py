import importlib

import pytest


def _module(name):
    # looked up per test, so that one module failing to import fails only its own tests
    return importlib.import_module("seqkit." + name)


def test_chunked_main():
    assert _module("chunks").chunked([1, 2, 3, 4], 2) == [[1, 2], [3, 4]]
    assert _module("chunks").chunked(list('abcdef'), 3) == [['a', 'b', 'c'], ['d', 'e', 'f']]


def test_chunked_edge_1():
    assert _module("chunks").chunked([1, 2, 3, 4, 5], 2) == [[1, 2], [3, 4], [5]]


def test_chunked_edge_2():
    assert _module("chunks").chunked([], 3) == []


def test_chunked_edge_3():
    with pytest.raises(ValueError):
        _module("chunks").chunked([1], 0)


def test_pairwise_diffs_main():
    assert _module("window").pairwise_diffs([1, 4, 9]) == [3, 5]
    assert _module("window").pairwise_diffs([5, 3, 3]) == [-2, 0]


def test_pairwise_diffs_edge_1():
    assert _module("window").pairwise_diffs([7]) == []


def test_pairwise_diffs_edge_2():
    assert _module("window").pairwise_diffs([]) == []


def test_pad_to_multiple_unchanged():
    assert _module("chunks").pad_to_multiple([1, 2, 3], 4) == [1, 2, 3, None]
    assert _module("chunks").pad_to_multiple(['a'], 3, fill='-') == ['a', '-', '-']


def test_moving_average_unchanged():
    assert _module("window").moving_average([1, 2, 3, 4], 2) == [1.5, 2.5, 3.5]
    assert _module("window").moving_average([2, 4, 6], 3) == [4.0]
