import importlib

import pytest


def _module(name):
    # looked up per test, so that one module failing to import fails only its own tests
    return importlib.import_module("numkit." + name)


def test_round_to_step_main():
    assert _module("rounding").round_to_step(7, 5) == 5.0
    assert _module("rounding").round_to_step(8, 5) == 10.0
    assert _module("rounding").round_to_step(0.26, 0.25) == 0.25


def test_round_to_step_edge_1():
    assert _module("rounding").round_to_step(7.5, 5) == 10.0


def test_round_to_step_edge_2():
    assert _module("rounding").round_to_step(12.5, 5) == 15.0


def test_round_to_step_edge_3():
    with pytest.raises(ValueError):
        _module("rounding").round_to_step(3, 0)


def test_round_to_step_edge_4():
    with pytest.raises(ValueError):
        _module("rounding").round_to_step(3, -1)


def test_parse_percent_main():
    assert _module("convert").parse_percent('12.5%') == 0.125
    assert _module("convert").parse_percent('100%') == 1.0


def test_parse_percent_edge_1():
    assert _module("convert").parse_percent(' 40 % ') == 0.4


def test_parse_percent_edge_2():
    with pytest.raises(ValueError):
        _module("convert").parse_percent('40')


def test_parse_percent_edge_3():
    with pytest.raises(ValueError):
        _module("convert").parse_percent('abc%')


def test_round_half_up_unchanged():
    assert _module("rounding").round_half_up(2.5) == 3.0
    assert _module("rounding").round_half_up(0.125, 2) == 0.13
    assert _module("rounding").round_half_up(7.24, digits=1) == 7.2


def test_to_base_unchanged():
    assert _module("convert").to_base(255, 16) == 'ff'
    assert _module("convert").to_base(6) == '110'
    assert _module("convert").to_base(35, base=36) == 'z'
