import importlib

import pytest


def _module(name):
    # looked up per test, so that one module failing to import fails only its own tests
    return importlib.import_module("wordsmith." + name)


def test_camel_to_snake_main():
    assert _module("case").camel_to_snake('parseHttpResponse') == 'parse_http_response'
    assert _module("case").camel_to_snake('UserName') == 'user_name'


def test_camel_to_snake_edge_1():
    assert _module("case").camel_to_snake('HTTPServer') == 'http_server'


def test_camel_to_snake_edge_2():
    assert _module("case").camel_to_snake('getID') == 'get_id'


def test_camel_to_snake_edge_3():
    assert _module("case").camel_to_snake('already_snake') == 'already_snake'


def test_swap_case_words_unchanged():
    assert _module("case").swap_case_words('hELLO wORLD') == 'Hello World'
    assert _module("case").swap_case_words('the quick FOX') == 'The Quick Fox'
