import importlib

import pytest


def _module(name):
    # looked up per test, so that one module failing to import fails only its own tests
    return importlib.import_module("numkit." + name)


def test_overlap_main():
    assert _module("ranges").overlap((0, 10), (5, 20)) == 5
    assert _module("ranges").overlap((3, 8), (0, 100)) == 5


def test_overlap_edge_1():
    assert _module("ranges").overlap((0, 5), (5, 9)) == 0


def test_overlap_edge_2():
    assert _module("ranges").overlap((0, 2), (7, 9)) == 0


def test_overlap_edge_3():
    assert _module("ranges").overlap((5, 5), (0, 10)) == 0


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


def test_clamp_unchanged():
    assert _module("ranges").clamp(5, 0, 10) == 5
    assert _module("ranges").clamp(-3, 0, 10) == 0
    assert _module("ranges").clamp(42, 0, 10) == 10


def test_parse_percent_unchanged():
    assert _module("convert").parse_percent('12.5%') == 0.125
    assert _module("convert").parse_percent('100%') == 1.0
