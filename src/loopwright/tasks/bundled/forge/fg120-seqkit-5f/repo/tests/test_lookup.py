import importlib

import pytest


def _module(name):
    # looked up per test, so that one module failing to import fails only its own tests
    return importlib.import_module("seqkit." + name)


def test_invert_dict_1():
    assert _module("lookup").invert_dict({'a': 1, 'b': 2}) == {1: ['a'], 2: ['b']}
