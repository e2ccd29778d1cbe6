import importlib

import pytest


def _module(name):
    # looked up per test, so that one module failing to import fails only its own tests
    return importlib.import_module("wordsmith." + name)


def test_collapse_spaces_1():
    assert _module("clean").collapse_spaces('a   b\t\tc') == 'a b c'


def test_collapse_spaces_2():
    assert _module("clean").collapse_spaces('one\n\ntwo three') == 'one two three'
