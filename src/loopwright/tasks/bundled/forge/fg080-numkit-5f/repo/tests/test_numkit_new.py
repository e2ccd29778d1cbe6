import importlib

import pytest


def _module(name):
    # looked up per test, so that one module failing to import fails only its own tests
    return importlib.import_module("numkit." + name)


def test_mean_or_none_basic_1():
    assert _module("stats").mean_or_none([1, 2, 3, 4]) == 2.5


def test_round_to_step_basic_1():
    assert _module("rounding").round_to_step(7, 5) == 5.0


def test_clamp_basic_1():
    assert _module("ranges").clamp(5, 0, 10) == 5


def test_to_base_basic_1():
    assert _module("convert").to_base(255, 16) == 'ff'


def test_format_cents_basic_1():
    assert _module("money").format_cents(123456) == '$1,234.56'
