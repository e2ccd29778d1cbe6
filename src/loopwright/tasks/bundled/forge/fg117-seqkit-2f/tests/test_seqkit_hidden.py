import importlib

import pytest


def _module(name):
    # looked up per test, so that one module failing to import fails only its own tests
    return importlib.import_module("seqkit." + name)


def test_count_by_main():
    assert _module("group").count_by(['a', 'bb', 'cc', 'd'], len) == {1: 2, 2: 2}


def test_count_by_edge_1():
    assert list(_module("group").count_by([1, 2, 2, 3, 3, 3], lambda n: n).items()) == list(({1: 1, 2: 2, 3: 3}).items())


def test_count_by_edge_2():
    assert _module("group").count_by([], len) == {}


def test_get_path_main():
    assert _module("lookup").get_path({'a': {'b': 1}}, 'a.b') == 1
    assert _module("lookup").get_path({'x': {'y': {'z': 'deep'}}}, 'x.y.z') == 'deep'


def test_get_path_edge_1():
    assert _module("lookup").get_path({'a': 1}, 'a.b', default='none') == 'none'


def test_get_path_edge_2():
    assert _module("lookup").get_path({'a': {}}, 'a.q') == None


def test_get_path_edge_3():
    assert _module("lookup").get_path({'k': 2}, '') == {'k': 2}


def test_group_by_unchanged():
    assert _module("group").group_by(['apple', 'avocado', 'banana'], key=lambda s: s[0]) == {'a': ['apple', 'avocado'], 'b': ['banana']}


def test_invert_dict_unchanged():
    assert _module("lookup").invert_dict({'a': 1, 'b': 2}) == {1: ['a'], 2: ['b']}
