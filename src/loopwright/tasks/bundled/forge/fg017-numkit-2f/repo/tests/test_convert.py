import importlib

import pytest


def _module(name):
    # looked up per test, so that one module failing to import fails only its own tests
    return importlib.import_module("numkit." + name)


def test_parse_percent_1():
    assert _module("convert").parse_percent('12.5%') == 0.125


def test_parse_percent_2():
    assert _module("convert").parse_percent('100%') == 1.0


def test_to_base_1():
    assert _module("convert").to_base(255, 16) == 'ff'


def test_to_base_2():
    assert _module("convert").to_base(6) == '110'


def test_to_base_3():
    assert _module("convert").to_base(35, base=36) == 'z'
