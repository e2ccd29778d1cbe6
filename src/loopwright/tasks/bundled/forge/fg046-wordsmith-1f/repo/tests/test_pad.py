import importlib

import pytest


def _module(name):
    # looked up per test, so that one module failing to import fails only its own tests
    return importlib.import_module("wordsmith." + name)


def test_center_text_1():
    assert _module("pad").center_text('ab', 6, '*') == '**ab**'


def test_center_text_2():
    assert _module("pad").center_text('ab', 5, fill='-') == '-ab--'


def test_indent_lines_1():
    assert _module("pad").indent_lines('a\nb', '> ') == '> a\n> b'


def test_indent_lines_2():
    assert _module("pad").indent_lines('x\ny\nz', prefix='--') == '--x\n--y\n--z'
