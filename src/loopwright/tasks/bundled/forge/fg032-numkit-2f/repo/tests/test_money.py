import importlib

import pytest


def _module(name):
    # looked up per test, so that one module failing to import fails only its own tests
    return importlib.import_module("numkit." + name)


def test_split_amount_1():
    assert _module("money").split_amount(100, 3) == [34, 33, 33]


def test_split_amount_2():
    assert _module("money").split_amount(90, 3) == [30, 30, 30]


def test_format_cents_1():
    assert _module("money").format_cents(123456) == '$1,234.56'


def test_format_cents_2():
    assert _module("money").format_cents(250, symbol='€') == '€2.50'
