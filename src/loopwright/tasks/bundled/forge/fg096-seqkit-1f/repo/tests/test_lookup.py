import importlib

import pytest


def _module(name):
    # looked up per test, so that one module failing to import fails only its own tests
    return importlib.import_module("seqkit." + name)


def test_get_path_1():
    assert _module("lookup").get_path({'a': {'b': 1}}, 'a.b') == 1


def test_get_path_2():
    assert _module("lookup").get_path({'x': {'y': {'z': 'deep'}}}, 'x.y.z') == 'deep'


def test_invert_dict_1():
    assert _module("lookup").invert_dict({'a': 1, 'b': 2}) == {1: ['a'], 2: ['b']}
