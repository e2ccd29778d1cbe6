import importlib

import pytest


def _module(name):
    # looked up per test, so that one module failing to import fails only its own tests
    return importlib.import_module("wordsmith." + name)


def test_strip_prefix_basic_1():
    assert _module("clean").strip_prefix('re_re_name', 're_') == 're_name'


def test_swap_case_words_basic_1():
    assert _module("case").swap_case_words('hELLO wORLD') == 'Hello World'


def test_longest_word_basic_1():
    assert _module("measure").longest_word('a quick brownish fox') == 'brownish'


def test_split_pairs_basic_1():
    assert _module("split").split_pairs('a=1, b = 2') == {'a': '1', 'b': '2'}


def test_center_text_basic_1():
    assert _module("pad").center_text('ab', 6, '*') == '**ab**'
