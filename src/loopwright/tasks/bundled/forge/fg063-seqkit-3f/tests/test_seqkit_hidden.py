import importlib

import pytest


def _module(name):
    # looked up per test, so that one module failing to import fails only its own tests
    return importlib.import_module("seqkit." + name)


def test_unique_in_order_main():
    assert _module("dedupe").unique_in_order([3, 1, 3, 2, 1]) == [3, 1, 2]
    assert _module("dedupe").unique_in_order(list('banana')) == ['b', 'a', 'n']


def test_unique_in_order_edge_1():
    assert _module("dedupe").unique_in_order(['A', 'b', 'a', 'B'], key=str.lower) == ['A', 'b']


def test_unique_in_order_edge_2():
    assert _module("dedupe").unique_in_order([]) == []


def test_moving_average_main():
    assert _module("window").moving_average([1, 2, 3, 4], 2) == [1.5, 2.5, 3.5]
    assert _module("window").moving_average([2, 4, 6], 3) == [4.0]


def test_moving_average_edge_1():
    assert _module("window").moving_average([1, 2], 3) == []


def test_moving_average_edge_2():
    with pytest.raises(ValueError):
        _module("window").moving_average([1, 2], 0)


def test_invert_dict_main():
    assert _module("lookup").invert_dict({'a': 1, 'b': 2}) == {1: ['a'], 2: ['b']}


def test_invert_dict_edge_1():
    assert _module("lookup").invert_dict({'a': 1, 'b': 1, 'c': 2}) == {1: ['a', 'b'], 2: ['c']}


def test_invert_dict_edge_2():
    assert _module("lookup").invert_dict({}) == {}


def test_duplicates_unchanged():
    assert _module("dedupe").duplicates([1, 2, 1, 3, 2]) == [1, 2]
    assert _module("dedupe").duplicates(['b', 'a', 'a', 'b']) == ['a', 'b']


def test_pairwise_diffs_unchanged():
    assert _module("window").pairwise_diffs([1, 4, 9]) == [3, 5]
    assert _module("window").pairwise_diffs([5, 3, 3]) == [-2, 0]


def test_get_path_unchanged():
    assert _module("lookup").get_path({'a': {'b': 1}}, 'a.b') == 1
    assert _module("lookup").get_path({'x': {'y': {'z': 'deep'}}}, 'x.y.z') == 'deep'
