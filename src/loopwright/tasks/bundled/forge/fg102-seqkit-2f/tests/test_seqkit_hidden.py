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


def test_duplicates_main():
    assert _module("dedupe").duplicates([1, 2, 1, 3, 2]) == [1, 2]
    assert _module("dedupe").duplicates(['b', 'a', 'a', 'b']) == ['a', 'b']


def test_duplicates_edge_1():
    assert _module("dedupe").duplicates([5, 5, 5]) == [5]


def test_duplicates_edge_2():
    assert _module("dedupe").duplicates([1, 2, 3]) == []


def test_duplicates_edge_3():
    assert _module("dedupe").duplicates([]) == []


def test_pad_to_multiple_unchanged():
    assert _module("chunks").pad_to_multiple([1, 2, 3], 4) == [1, 2, 3, None]
    assert _module("chunks").pad_to_multiple(['a'], 3, fill='-') == ['a', '-', '-']


def test_unique_in_order_unchanged():
    assert _module("dedupe").unique_in_order([3, 1, 3, 2, 1]) == [3, 1, 2]
    assert _module("dedupe").unique_in_order(list('banana')) == ['b', 'a', 'n']
