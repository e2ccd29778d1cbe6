import importlib

import pytest


def _module(name):
    # looked up per test, so that one module failing to import fails only its own tests
    return importlib.import_module("numkit." + name)


def test_median_basic_1():
    assert _module("stats").median([3, 1, 2]) == 2.0


def test_round_to_step_basic_1():
    assert _module("rounding").round_to_step(7, 5) == 5.0


def test_split_amount_basic_1():
    assert _module("money").split_amount(100, 3) == [34, 33, 33]
