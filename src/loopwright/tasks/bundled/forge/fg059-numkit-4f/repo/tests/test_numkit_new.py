import importlib

import pytest


def _module(name):
    # looked up per test, so that one module failing to import fails only its own tests
    return importlib.import_module("numkit." + name)


def test_median_basic_1():
    assert _module("stats").median([3, 1, 2]) == 2.0


def test_overlap_basic_1():
    assert _module("ranges").overlap((0, 10), (5, 20)) == 5


def test_parse_percent_basic_1():
    assert _module("convert").parse_percent('12.5%') == 0.125


def test_split_amount_basic_1():
    assert _module("money").split_amount(100, 3) == [34, 33, 33]
