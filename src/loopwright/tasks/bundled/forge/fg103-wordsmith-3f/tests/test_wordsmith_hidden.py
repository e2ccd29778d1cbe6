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


def test_count_vowels_main():
    assert _module("measure").count_vowels('Hello World') == 3
    assert _module("measure").count_vowels('AEIOU') == 5


def test_count_vowels_edge_1():
    assert _module("measure").count_vowels('rhythm', include_y=True) == 1


def test_count_vowels_edge_2():
    assert _module("measure").count_vowels('Yay', include_y=True) == 3


def test_count_vowels_edge_3():
    assert _module("measure").count_vowels('') == 0


def test_split_sentences_main():
    assert _module("split").split_sentences('Hi there. How are you? Fine!') == ['Hi there.', 'How are you?', 'Fine!']


def test_split_sentences_edge_1():
    assert _module("split").split_sentences('One. Two') == ['One.', 'Two']


def test_split_sentences_edge_2():
    assert _module("split").split_sentences('Wait... What?!') == ['Wait...', 'What?!']


def test_split_sentences_edge_3():
    assert _module("split").split_sentences('   ') == []


def test_swap_case_words_unchanged():
    assert _module("case").swap_case_words('hELLO wORLD') == 'Hello World'
    assert _module("case").swap_case_words('the quick FOX') == 'The Quick Fox'


def test_longest_word_unchanged():
    assert _module("measure").longest_word('a quick brownish fox') == 'brownish'
    assert _module("measure").longest_word('hello') == 'hello'


def test_split_pairs_unchanged():
    assert _module("split").split_pairs('a=1, b = 2') == {'a': '1', 'b': '2'}
    assert _module("split").split_pairs('x=y;z=w', sep=';') == {'x': 'y', 'z': 'w'}
