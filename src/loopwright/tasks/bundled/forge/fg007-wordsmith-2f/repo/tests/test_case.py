import importlib

import pytest


def _module(name):
    # looked up per test, so that one module failing to import fails only its own tests
    return importlib.import_module("wordsmith." + name)


def test_swap_case_words_1():
    assert _module("case").swap_case_words('hELLO wORLD') == 'Hello World'


def test_swap_case_words_2():
    assert _module("case").swap_case_words('the quick FOX') == 'The Quick Fox'


def test_camel_to_snake_1():
    assert _module("case").camel_to_snake('parseHttpResponse') == 'parse_http_response'


def test_camel_to_snake_2():
    assert _module("case").camel_to_snake('UserName') == 'user_name'
