import importlib

import pytest


def _module(name):
    # looked up per test, so that one module failing to import fails only its own tests
    return importlib.import_module("seqkit." + name)


def test_pairwise_diffs_1():
    assert _module("window").pairwise_diffs([1, 4, 9]) == [3, 5]


def test_pairwise_diffs_2():
    assert _module("window").pairwise_diffs([5, 3, 3]) == [-2, 0]


def test_moving_average_1():
    assert _module("window").moving_average([1, 2, 3, 4], 2) == [1.5, 2.5, 3.5]


def test_moving_average_2():
    assert _module("window").moving_average([2, 4, 6], 3) == [4.0]
