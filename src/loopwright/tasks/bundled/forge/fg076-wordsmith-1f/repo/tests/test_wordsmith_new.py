import importlib

import pytest


def _module(name):
    # looked up per test, so that one module failing to import fails only its own tests
    return importlib.import_module("wordsmith." + name)


def test_strip_prefix_basic_1():
    assert _module("clean").strip_prefix('re_re_name', 're_') == 're_name'
