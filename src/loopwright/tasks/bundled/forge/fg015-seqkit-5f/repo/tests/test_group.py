import importlib

import pytest


def _module(name):
    # looked up per test, so that one module failing to import fails only its own tests
    return importlib.import_module("seqkit." + name)


def test_group_by_1():
    assert _module("group").group_by(['apple', 'avocado', 'banana'], key=lambda s: s[0]) == {'a': ['apple', 'avocado'], 'b': ['banana']}
