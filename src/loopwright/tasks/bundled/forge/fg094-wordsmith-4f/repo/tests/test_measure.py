import importlib

import pytest


def _module(name):
    # looked up per test, so that one module failing to import fails only its own tests
    return importlib.import_module("wordsmith." + name)


def test_count_vowels_1():
    assert _module("measure").count_vowels('Hello World') == 3


def test_count_vowels_2():
    assert _module("measure").count_vowels('AEIOU') == 5
