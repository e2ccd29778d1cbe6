import importlib

import pytest


def _module(name):
    # looked up per test, so that one module failing to import fails only its own tests
    return importlib.import_module("wordsmith." + name)


def test_collapse_spaces_1():
    assert _module("clean").collapse_spaces('a   b\t\tc') == 'a b c'


def test_collapse_spaces_2():
    assert _module("clean").collapse_spaces('one\n\ntwo three') == 'one two three'


def test_strip_prefix_1():
    assert _module("clean").strip_prefix('re_re_name', 're_') == 're_name'


def test_strip_prefix_2():
    assert _module("clean").strip_prefix('v1.2', 'v') == '1.2'


def test_strip_prefix_3():
    assert _module("clean").strip_prefix('abc', 'x') == 'abc'
