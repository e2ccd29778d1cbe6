import importlib

import pytest


def _module(name):
    # looked up per test, so that one module failing to import fails only its own tests
    return importlib.import_module("wordsmith." + name)


def test_split_pairs_basic_1():
    assert _module("split").split_pairs('a=1, b = 2') == {'a': '1', 'b': '2'}
