import importlib

import pytest


def _module(name):
    # looked up per test, so that one module failing to import fails only its own tests
    return importlib.import_module("wordsmith." + name)


def test_collapse_spaces_basic_1():
    assert _module("clean").collapse_spaces('a   b\t\tc') == 'a b c'


def test_camel_to_snake_basic_1():
    assert _module("case").camel_to_snake('parseHttpResponse') == 'parse_http_response'
