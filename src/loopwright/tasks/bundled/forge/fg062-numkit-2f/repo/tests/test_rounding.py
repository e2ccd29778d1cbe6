import importlib

import pytest


def _module(name):
    # looked up per test, so that one module failing to import fails only its own tests
    return importlib.import_module("numkit." + name)


def test_round_half_up_1():
    assert _module("rounding").round_half_up(2.5) == 3.0


def test_round_half_up_2():
    assert _module("rounding").round_half_up(0.125, 2) == 0.13


def test_round_half_up_3():
    assert _module("rounding").round_half_up(7.24, digits=1) == 7.2


def test_round_to_step_1():
    assert _module("rounding").round_to_step(7, 5) == 5.0


def test_round_to_step_2():
    assert _module("rounding").round_to_step(8, 5) == 10.0


def test_round_to_step_3():
    assert _module("rounding").round_to_step(0.26, 0.25) == 0.25
