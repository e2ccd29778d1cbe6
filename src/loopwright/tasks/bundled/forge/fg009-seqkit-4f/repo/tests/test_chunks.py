import importlib

import pytest


def _module(name):
    # looked up per test, so that one module failing to import fails only its own tests
    return importlib.import_module("seqkit." + name)


def test_chunked_1():
    assert _module("chunks").chunked([1, 2, 3, 4], 2) == [[1, 2], [3, 4]]


def test_chunked_2():
    assert _module("chunks").chunked(list('abcdef'), 3) == [['a', 'b', 'c'], ['d', 'e', 'f']]
