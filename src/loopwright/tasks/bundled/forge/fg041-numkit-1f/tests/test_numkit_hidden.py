import importlib

import pytest


def _module(name):
    # looked up per test, so that one module failing to import fails only its own tests
    return importlib.import_module("numkit." + name)


def test_to_base_main():
    assert _module("convert").to_base(255, 16) == 'ff'
    assert _module("convert").to_base(6) == '110'
    assert _module("convert").to_base(35, base=36) == 'z'


def test_to_base_edge_1():
    assert _module("convert").to_base(0, 7) == '0'


def test_to_base_edge_2():
    assert _module("convert").to_base(-10, 2) == '-1010'


def test_to_base_edge_3():
    with pytest.raises(ValueError):
        _module("convert").to_base(5, 1)


def test_parse_percent_unchanged():
    assert _module("convert").parse_percent('12.5%') == 0.125
    assert _module("convert").parse_percent('100%') == 1.0
