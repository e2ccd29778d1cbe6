import importlib

import pytest


def _module(name):
    # looked up per test, so that one module failing to import fails only its own tests
    return importlib.import_module("numkit." + name)


def test_mean_or_none_basic_1():
    assert _module("stats").mean_or_none([1, 2, 3, 4]) == 2.5


def test_round_half_up_basic_1():
    assert _module("rounding").round_half_up(2.5) == 3.0


def test_to_base_basic_1():
    assert _module("convert").to_base(255, 16) == 'ff'


def test_split_amount_basic_1():
    assert _module("money").split_amount(100, 3) == [34, 33, 33]
