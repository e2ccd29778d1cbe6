import importlib

import pytest


def _module(name):
    # looked up per test, so that one module failing to import fails only its own tests
    return importlib.import_module("seqkit." + name)


def test_pairwise_diffs_1():
    assert _module("window").pairwise_diffs([1, 4, 9]) == [3, 5]


def test_pairwise_diffs_2():
    assert _module("window").pairwise_diffs([5, 3, 3]) == [-2, 0]
