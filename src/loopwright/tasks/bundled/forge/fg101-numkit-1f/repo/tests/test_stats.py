import importlib

import pytest


def _module(name):
    # looked up per test, so that one module failing to import fails only its own tests
    return importlib.import_module("numkit." + name)


def test_mean_or_none_1():
    assert _module("stats").mean_or_none([1, 2, 3, 4]) == 2.5


def test_mean_or_none_2():
    assert _module("stats").mean_or_none([10]) == 10.0
