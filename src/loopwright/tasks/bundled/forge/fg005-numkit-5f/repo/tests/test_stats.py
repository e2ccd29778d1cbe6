import importlib

import pytest


def _module(name):
    # looked up per test, so that one module failing to import fails only its own tests
    return importlib.import_module("numkit." + name)


def test_median_1():
    assert _module("stats").median([3, 1, 2]) == 2.0


def test_median_2():
    assert _module("stats").median([9, 1, 5, 7, 3]) == 5.0
