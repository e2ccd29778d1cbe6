import importlib

import pytest


def _module(name):
    # looked up per test, so that one module failing to import fails only its own tests
    return importlib.import_module("wordsmith." + name)


def test_collapse_spaces_basic_1():
    assert _module("clean").collapse_spaces('a   b\t\tc') == 'a b c'


def test_camel_to_snake_basic_1():
    assert _module("case").camel_to_snake('parseHttpResponse') == 'parse_http_response'


def test_longest_word_basic_1():
    assert _module("measure").longest_word('a quick brownish fox') == 'brownish'


def test_split_pairs_basic_1():
    assert _module("split").split_pairs('a=1, b = 2') == {'a': '1', 'b': '2'}


def test_indent_lines_basic_1():
    assert _module("pad").indent_lines('a\nb', '> ') == '> a\n> b'
