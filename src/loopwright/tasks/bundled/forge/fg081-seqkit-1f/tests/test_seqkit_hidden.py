import importlib

import pytest


def _module(name):
    # looked up per test, so that one module failing to import fails only its own tests
    return importlib.import_module("seqkit." + name)


def test_group_by_main():
    assert _module("group").group_by(['apple', 'avocado', 'banana'], key=lambda s: s[0]) == {'a': ['apple', 'avocado'], 'b': ['banana']}


def test_group_by_edge_1():
    assert list(_module("group").group_by([3, 1, 2, 4], key=lambda n: n % 2).items()) == list(({1: [3, 1], 0: [2, 4]}).items())


def test_group_by_edge_2():
    assert _module("group").group_by([], key=len) == {}


def test_count_by_unchanged():
    assert _module("group").count_by(['a', 'bb', 'cc', 'd'], len) == {1: 2, 2: 2}
