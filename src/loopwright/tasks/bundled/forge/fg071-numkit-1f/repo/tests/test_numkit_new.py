import importlib

import pytest


def _module(name):
    # looked up per test, so that one module failing to import fails only its own tests
    return importlib.import_module("numkit." + name)


def test_split_amount_basic_1():
    assert _module("money").split_amount(100, 3) == [34, 33, 33]
