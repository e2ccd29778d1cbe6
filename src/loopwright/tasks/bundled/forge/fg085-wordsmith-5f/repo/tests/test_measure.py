import importlib

import pytest


def _module(name):
    # looked up per test, so that one module failing to import fails only its own tests
    return importlib.import_module("wordsmith." + name)


def test_longest_word_1():
    assert _module("measure").longest_word('a quick brownish fox') == 'brownish'


def test_longest_word_2():
    assert _module("measure").longest_word('hello') == 'hello'
