import importlib

import pytest


def _module(name):
    # looked up per test, so that one module failing to import fails only its own tests
    return importlib.import_module("wordsmith." + name)


def test_count_vowels_basic_1():
    assert _module("measure").count_vowels('Hello World') == 3


def test_split_sentences_basic_1():
    assert _module("split").split_sentences('Hi there. How are you? Fine!') == ['Hi there.', 'How are you?', 'Fine!']


def test_center_text_basic_1():
    assert _module("pad").center_text('ab', 6, '*') == '**ab**'
