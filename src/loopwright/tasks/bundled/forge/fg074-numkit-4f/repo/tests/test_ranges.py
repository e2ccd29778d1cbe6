import importlib

import pytest


def _module(name):
    # looked up per test, so that one module failing to import fails only its own tests
    return importlib.import_module("numkit." + name)


def test_clamp_1():
    assert _module("ranges").clamp(5, 0, 10) == 5


def test_clamp_2():
    assert _module("ranges").clamp(-3, 0, 10) == 0


def test_clamp_3():
    assert _module("ranges").clamp(42, 0, 10) == 10


def test_overlap_1():
    assert _module("ranges").overlap((0, 10), (5, 20)) == 5


def test_overlap_2():
    assert _module("ranges").overlap((3, 8), (0, 100)) == 5
