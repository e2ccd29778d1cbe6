import importlib

import pytest


def _module(name):
    # looked up per test, so that one module failing to import fails only its own tests
    return importlib.import_module("wordsmith." + name)


def test_collapse_spaces_basic_1():
    assert _module("clean").collapse_spaces('a   b\t\tc') == 'a b c'


def test_count_vowels_basic_1():
    assert _module("measure").count_vowels('Hello World') == 3


def test_split_pairs_basic_1():
    assert _module("split").split_pairs('a=1, b = 2') == {'a': '1', 'b': '2'}


def test_center_text_basic_1():
    assert _module("pad").center_text('ab', 6, '*') == '**ab**'
