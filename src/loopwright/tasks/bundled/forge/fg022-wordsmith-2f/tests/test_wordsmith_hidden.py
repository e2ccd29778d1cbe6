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


def test_split_pairs_main():
    assert _module("split").split_pairs('a=1, b = 2') == {'a': '1', 'b': '2'}
    assert _module("split").split_pairs('x=y;z=w', sep=';') == {'x': 'y', 'z': 'w'}


def test_split_pairs_edge_1():
    assert _module("split").split_pairs('a=1,,b=2') == {'a': '1', 'b': '2'}


def test_split_pairs_edge_2():
    assert _module("split").split_pairs('url=a=b') == {'url': 'a=b'}


def test_split_pairs_edge_3():
    with pytest.raises(ValueError):
        _module("split").split_pairs('broken')


def test_swap_case_words_unchanged():
    assert _module("case").swap_case_words('hELLO wORLD') == 'Hello World'
    assert _module("case").swap_case_words('the quick FOX') == 'The Quick Fox'


def test_split_sentences_unchanged():
    assert _module("split").split_sentences('Hi there. How are you? Fine!') == ['Hi there.', 'How are you?', 'Fine!']
