import importlib

import pytest


def _module(name):
    # looked up per test, so that one module failing to import fails only its own tests
    return importlib.import_module("seqkit." + name)


def test_pad_to_multiple_basic_1():
    assert _module("chunks").pad_to_multiple([1, 2, 3], 4) == [1, 2, 3, None]


def test_unique_in_order_basic_1():
    assert _module("dedupe").unique_in_order([3, 1, 3, 2, 1]) == [3, 1, 2]
