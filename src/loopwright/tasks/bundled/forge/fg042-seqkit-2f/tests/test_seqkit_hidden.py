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


def test_group_by_main():
    assert _module("group").group_by(['apple', 'avocado', 'banana'], key=lambda s: s[0]) == {'a': ['apple', 'avocado'], 'b': ['banana']}


def test_group_by_edge_1():
    assert list(_module("group").group_by([3, 1, 2, 4], key=lambda n: n % 2).items()) == list(({1: [3, 1], 0: [2, 4]}).items())


def test_group_by_edge_2():
    assert _module("group").group_by([], key=len) == {}


def test_chunked_unchanged():
    assert _module("chunks").chunked([1, 2, 3, 4], 2) == [[1, 2], [3, 4]]
    assert _module("chunks").chunked(list('abcdef'), 3) == [['a', 'b', 'c'], ['d', 'e', 'f']]


def test_count_by_unchanged():
    assert _module("group").count_by(['a', 'bb', 'cc', 'd'], len) == {1: 2, 2: 2}
