import importlib

import pytest


def _module(name):
    # looked up per test, so that one module failing to import fails only its own tests
    return importlib.import_module("seqkit." + name)


def test_unique_in_order_1():
    assert _module("dedupe").unique_in_order([3, 1, 3, 2, 1]) == [3, 1, 2]


def test_unique_in_order_2():
    assert _module("dedupe").unique_in_order(list('banana')) == ['b', 'a', 'n']


def test_duplicates_1():
    assert _module("dedupe").duplicates([1, 2, 1, 3, 2]) == [1, 2]


def test_duplicates_2():
    assert _module("dedupe").duplicates(['b', 'a', 'a', 'b']) == ['a', 'b']
