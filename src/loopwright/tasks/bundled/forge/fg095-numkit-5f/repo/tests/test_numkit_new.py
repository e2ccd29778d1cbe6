import importlib

import pytest


def _module(name):
    # looked up per test, so that one module failing to import fails only its own tests
    return importlib.import_module("numkit." + name)


def test_median_basic_1():
    assert _module("stats").median([3, 1, 2]) == 2.0


def test_round_half_up_basic_1():
    assert _module("rounding").round_half_up(2.5) == 3.0


def test_clamp_basic_1():
    assert _module("ranges").clamp(5, 0, 10) == 5


def test_to_base_basic_1():
    assert _module("convert").to_base(255, 16) == 'ff'


def test_format_cents_basic_1():
    assert _module("money").format_cents(123456) == '$1,234.56'
