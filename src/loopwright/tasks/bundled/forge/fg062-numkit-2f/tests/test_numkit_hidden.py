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


def test_overlap_main():
    assert _module("ranges").overlap((0, 10), (5, 20)) == 5
    assert _module("ranges").overlap((3, 8), (0, 100)) == 5


def test_overlap_edge_1():
    assert _module("ranges").overlap((0, 5), (5, 9)) == 0


def test_overlap_edge_2():
    assert _module("ranges").overlap((0, 2), (7, 9)) == 0


def test_overlap_edge_3():
    assert _module("ranges").overlap((5, 5), (0, 10)) == 0


def test_mean_or_none_unchanged():
    assert _module("stats").mean_or_none([1, 2, 3, 4]) == 2.5
    assert _module("stats").mean_or_none([10]) == 10.0


def test_clamp_unchanged():
    assert _module("ranges").clamp(5, 0, 10) == 5
    assert _module("ranges").clamp(-3, 0, 10) == 0
    assert _module("ranges").clamp(42, 0, 10) == 10
