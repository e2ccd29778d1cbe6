import importlib

import pytest


def _module(name):
    # looked up per test, so that one module failing to import fails only its own tests
    return importlib.import_module("wordsmith." + name)


def test_strip_prefix_main():
    assert _module("clean").strip_prefix('re_re_name', 're_') == 're_name'
    assert _module("clean").strip_prefix('v1.2', 'v') == '1.2'
    assert _module("clean").strip_prefix('abc', 'x') == 'abc'


def test_strip_prefix_edge_1():
    assert _module("clean").strip_prefix('Mr. Smith', 'mr. ', ignore_case=True) == 'Smith'


def test_strip_prefix_edge_2():
    assert _module("clean").strip_prefix('a_b_c', '_b') == 'a_b_c'


def test_strip_prefix_edge_3():
    assert _module("clean").strip_prefix('abc', '') == 'abc'


def test_collapse_spaces_unchanged():
    assert _module("clean").collapse_spaces('a   b\t\tc') == 'a b c'
    assert _module("clean").collapse_spaces('one\n\ntwo three') == 'one two three'
