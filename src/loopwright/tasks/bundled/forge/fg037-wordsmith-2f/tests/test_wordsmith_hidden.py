import importlib

import pytest


def _module(name):
    # looked up per test, so that one module failing to import fails only its own tests
    return importlib.import_module("wordsmith." + name)


def test_collapse_spaces_main():
    assert _module("clean").collapse_spaces('a   b\t\tc') == 'a b c'
    assert _module("clean").collapse_spaces('one\n\ntwo three') == 'one two three'


def test_collapse_spaces_edge_1():
    assert _module("clean").collapse_spaces('  padded  ') == 'padded'


def test_collapse_spaces_edge_2():
    assert _module("clean").collapse_spaces(' \t ') == ''


def test_collapse_spaces_edge_3():
    assert _module("clean").collapse_spaces('') == ''


def test_camel_to_snake_main():
    assert _module("case").camel_to_snake('parseHttpResponse') == 'parse_http_response'
    assert _module("case").camel_to_snake('UserName') == 'user_name'


def test_camel_to_snake_edge_1():
    assert _module("case").camel_to_snake('HTTPServer') == 'http_server'


def test_camel_to_snake_edge_2():
    assert _module("case").camel_to_snake('getID') == 'get_id'


def test_camel_to_snake_edge_3():
    assert _module("case").camel_to_snake('already_snake') == 'already_snake'


def test_strip_prefix_unchanged():
    assert _module("clean").strip_prefix('re_re_name', 're_') == 're_name'
    assert _module("clean").strip_prefix('v1.2', 'v') == '1.2'
    assert _module("clean").strip_prefix('abc', 'x') == 'abc'


def test_swap_case_words_unchanged():
    assert _module("case").swap_case_words('hELLO wORLD') == 'Hello World'
    assert _module("case").swap_case_words('the quick FOX') == 'The Quick Fox'
