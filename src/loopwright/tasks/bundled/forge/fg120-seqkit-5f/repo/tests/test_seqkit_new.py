import importlib

import pytest


def _module(name):
    # looked up per test, so that one module failing to import fails only its own tests
    return importlib.import_module("seqkit." + name)


def test_chunked_basic_1():
    assert _module("chunks").chunked([1, 2, 3, 4], 2) == [[1, 2], [3, 4]]


def test_unique_in_order_basic_1():
    assert _module("dedupe").unique_in_order([3, 1, 3, 2, 1]) == [3, 1, 2]


def test_count_by_basic_1():
    assert _module("group").count_by(['a', 'bb', 'cc', 'd'], len) == {1: 2, 2: 2}


def test_moving_average_basic_1():
    assert _module("window").moving_average([1, 2, 3, 4], 2) == [1.5, 2.5, 3.5]


def test_get_path_basic_1():
    assert _module("lookup").get_path({'a': {'b': 1}}, 'a.b') == 1
