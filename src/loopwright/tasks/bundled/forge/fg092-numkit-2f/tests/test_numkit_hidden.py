import importlib

import pytest


def _module(name):
    # looked up per test, so that one module failing to import fails only its own tests
    return importlib.import_module("numkit." + name)


def test_round_half_up_main():
    assert _module("rounding").round_half_up(2.5) == 3.0
    assert _module("rounding").round_half_up(0.125, 2) == 0.13
    assert _module("rounding").round_half_up(7.24, digits=1) == 7.2


def test_round_half_up_edge_1():
    assert _module("rounding").round_half_up(-2.5) == -3.0


def test_round_half_up_edge_2():
    assert _module("rounding").round_half_up(1.005, 2) == 1.01


def test_round_half_up_edge_3():
    assert _module("rounding").round_half_up(1250, -2) == 1300.0


def test_overlap_main():
    assert _module("ranges").overlap((0, 10), (5, 20)) == 5
    assert _module("ranges").overlap((3, 8), (0, 100)) == 5


def test_overlap_edge_1():
    assert _module("ranges").overlap((0, 5), (5, 9)) == 0


def test_overlap_edge_2():
    assert _module("ranges").overlap((0, 2), (7, 9)) == 0


def test_overlap_edge_3():
    assert _module("ranges").overlap((5, 5), (0, 10)) == 0


def test_round_to_step_unchanged():
    assert _module("rounding").round_to_step(7, 5) == 5.0
    assert _module("rounding").round_to_step(8, 5) == 10.0
    assert _module("rounding").round_to_step(0.26, 0.25) == 0.25


def test_clamp_unchanged():
    assert _module("ranges").clamp(5, 0, 10) == 5
    assert _module("ranges").clamp(-3, 0, 10) == 0
    assert _module("ranges").clamp(42, 0, 10) == 10
