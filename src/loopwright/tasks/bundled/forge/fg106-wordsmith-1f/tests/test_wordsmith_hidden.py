import importlib

import pytest


def _module(name):
    # looked up per test, so that one module failing to import fails only its own tests
    return importlib.import_module("wordsmith." + name)


def test_count_vowels_main():
    assert _module("measure").count_vowels('Hello World') == 3
    assert _module("measure").count_vowels('AEIOU') == 5


def test_count_vowels_edge_1():
    assert _module("measure").count_vowels('rhythm', include_y=True) == 1


def test_count_vowels_edge_2():
    assert _module("measure").count_vowels('Yay', include_y=True) == 3


def test_count_vowels_edge_3():
    assert _module("measure").count_vowels('') == 0


def test_longest_word_unchanged():
    assert _module("measure").longest_word('a quick brownish fox') == 'brownish'
    assert _module("measure").longest_word('hello') == 'hello'
