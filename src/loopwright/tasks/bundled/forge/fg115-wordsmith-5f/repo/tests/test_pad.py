import importlib

import pytest


def _module(name):
    # looked up per test, so that one module failing to import fails only its own tests
    return importlib.import_module("wordsmith." + name)


def test_indent_lines_1():
    assert _module("pad").indent_lines('a\nb', '> ') == '> a\n> b'


def test_indent_lines_2():
    assert _module("pad").indent_lines('x\ny\nz', prefix='--') == '--x\n--y\n--z'
