import importlib

import pytest


def _module(name):
    # looked up per test, so that one module failing to import fails only its own tests
    return importlib.import_module("seqkit." + name)


def test_pad_to_multiple_1():
    assert _module("chunks").pad_to_multiple([1, 2, 3], 4) == [1, 2, 3, None]


def test_pad_to_multiple_2():
    assert _module("chunks").pad_to_multiple(['a'], 3, fill='-') == ['a', '-', '-']
