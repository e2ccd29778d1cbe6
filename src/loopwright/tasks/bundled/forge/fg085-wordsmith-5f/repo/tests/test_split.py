import importlib

import pytest


def _module(name):
    # looked up per test, so that one module failing to import fails only its own tests
    return importlib.import_module("wordsmith." + name)


def test_split_sentences_1():
    assert _module("split").split_sentences('Hi there. How are you? Fine!') == ['Hi there.', 'How are you?', 'Fine!']
