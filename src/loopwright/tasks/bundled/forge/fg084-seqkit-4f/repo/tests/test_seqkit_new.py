import importlib

import pytest


def _module(name):
    # looked up per test, so that one module failing to import fails only its own tests
    return importlib.import_module("seqkit." + name)


def test_pad_to_multiple_basic_1():
    assert _module("chunks").pad_to_multiple([1, 2, 3], 4) == [1, 2, 3, None]


def test_count_by_basic_1():
    assert _module("group").count_by(['a', 'bb', 'cc', 'd'], len) == {1: 2, 2: 2}


def test_pairwise_diffs_basic_1():
    assert _module("window").pairwise_diffs([1, 4, 9]) == [3, 5]


def test_get_path_basic_1():
    assert _module("lookup").get_path({'a': {'b': 1}}, 'a.b') == 1
