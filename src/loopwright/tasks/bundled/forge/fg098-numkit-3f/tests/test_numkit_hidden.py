import importlib

import pytest


def _module(name):
    # looked up per test, so that one module failing to import fails only its own tests
    return importlib.import_module("numkit." + name)


def test_median_main():
    assert _module("stats").median([3, 1, 2]) == 2.0
    assert _module("stats").median([9, 1, 5, 7, 3]) == 5.0


def test_median_edge_1():
    assert _module("stats").median([4, 1, 3, 2]) == 2.5


def test_median_edge_2():
    with pytest.raises(ValueError):
        _module("stats").median([])


def test_median_edge_3():
    assert _module("stats").median([7]) == 7.0


def test_clamp_main():
    assert _module("ranges").clamp(5, 0, 10) == 5
    assert _module("ranges").clamp(-3, 0, 10) == 0
    assert _module("ranges").clamp(42, 0, 10) == 10


def test_clamp_edge_1():
    assert _module("ranges").clamp(10, 0, 10) == 10


def test_clamp_edge_2():
    with pytest.raises(ValueError):
        _module("ranges").clamp(1, 5, 2)


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


def test_mean_or_none_unchanged():
    assert _module("stats").mean_or_none([1, 2, 3, 4]) == 2.5
    assert _module("stats").mean_or_none([10]) == 10.0


def test_overlap_unchanged():
    assert _module("ranges").overlap((0, 10), (5, 20)) == 5
    assert _module("ranges").overlap((3, 8), (0, 100)) == 5


def test_parse_percent_unchanged():
    assert _module("convert").parse_percent('12.5%') == 0.125
    assert _module("convert").parse_percent('100%') == 1.0
