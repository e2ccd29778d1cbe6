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


def test_swap_case_words_main():
    assert _module("case").swap_case_words('hELLO wORLD') == 'Hello World'
    assert _module("case").swap_case_words('the quick FOX') == 'The Quick Fox'


def test_swap_case_words_edge_1():
    assert _module("case").swap_case_words('a  b') == 'A  B'


def test_swap_case_words_edge_2():
    assert _module("case").swap_case_words('') == ''


def test_swap_case_words_edge_3():
    assert _module("case").swap_case_words('3RD place') == '3rd Place'


def test_longest_word_main():
    assert _module("measure").longest_word('a quick brownish fox') == 'brownish'
    assert _module("measure").longest_word('hello') == 'hello'


def test_longest_word_edge_1():
    assert _module("measure").longest_word('abc xyz') == 'abc'


def test_longest_word_edge_2():
    assert _module("measure").longest_word('') == ''


def test_longest_word_edge_3():
    assert _module("measure").longest_word('   ') == ''


def test_strip_prefix_unchanged():
    assert _module("clean").strip_prefix('re_re_name', 're_') == 're_name'
    assert _module("clean").strip_prefix('v1.2', 'v') == '1.2'
    assert _module("clean").strip_prefix('abc', 'x') == 'abc'


def test_camel_to_snake_unchanged():
    assert _module("case").camel_to_snake('parseHttpResponse') == 'parse_http_response'
    assert _module("case").camel_to_snake('UserName') == 'user_name'


def test_count_vowels_unchanged():
    assert _module("measure").count_vowels('Hello World') == 3
    assert _module("measure").count_vowels('AEIOU') == 5
