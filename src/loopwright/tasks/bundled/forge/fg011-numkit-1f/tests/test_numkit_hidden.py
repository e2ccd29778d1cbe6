import importlib

import pytest


def _module(name):
    # looked up per test, so that one module failing to import fails only its own tests
    return importlib.import_module("numkit." + name)


def test_clamp_main():
    assert _module("ranges").clamp(5, 0, 10) == 5
    assert _module("ranges").clamp(-3, 0, 10) == 0
    assert _module("ranges").clamp(42, 0, 10) == 10


def test_clamp_edge_1():
    assert _module("ranges").clamp(10, 0, 10) == 10


def test_clamp_edge_2():
    with pytest.raises(ValueError):
        _module("ranges").clamp(1, 5, 2)


def test_overlap_unchanged():
    assert _module("ranges").overlap((0, 10), (5, 20)) == 5
    assert _module("ranges").overlap((3, 8), (0, 100)) == 5
