import importlib

import pytest


def _module(name):
    # looked up per test, so that one module failing to import fails only its own tests
    return importlib.import_module("wordsmith." + name)


def test_collapse_spaces_main():
    assert _module("clean").collapse_spaces('a   b\t\tc') == 'a b c'
    assert _module("clean").collapse_spaces('one\n\ntwo three') == 'one two three'


def test_collapse_spaces_edge_1():
    assert _module("clean").collapse_spaces('  padded  ') == 'padded'


def test_collapse_spaces_edge_2():
    assert _module("clean").collapse_spaces(' \t ') == ''


def test_collapse_spaces_edge_3():
    assert _module("clean").collapse_spaces('') == ''


def test_swap_case_words_main():
    assert _module("case").swap_case_words('hELLO wORLD') == 'Hello World'
    assert _module("case").swap_case_words('the quick FOX') == 'The Quick Fox'


def test_swap_case_words_edge_1():
    assert _module("case").swap_case_words('a  b') == 'A  B'


def test_swap_case_words_edge_2():
    assert _module("case").swap_case_words('') == ''


def test_swap_case_words_edge_3():
    assert _module("case").swap_case_words('3RD place') == '3rd Place'


def test_count_vowels_main():
    assert _module("measure").count_vowels('Hello World') == 3
    assert _module("measure").count_vowels('AEIOU') == 5


def test_count_vowels_edge_1():
    assert _module("measure").count_vowels('rhythm', include_y=True) == 1


def test_count_vowels_edge_2():
    assert _module("measure").count_vowels('Yay', include_y=True) == 3


def test_count_vowels_edge_3():
    assert _module("measure").count_vowels('') == 0


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


def test_center_text_main():
    assert _module("pad").center_text('ab', 6, '*') == '**ab**'
    assert _module("pad").center_text('ab', 5, fill='-') == '-ab--'


def test_center_text_edge_1():
    assert _module("pad").center_text('abcdef', 3) == 'abcdef'


def test_center_text_edge_2():
    with pytest.raises(ValueError):
        _module("pad").center_text('x', 3, fill='--')


def test_center_text_edge_3():
    with pytest.raises(ValueError):
        _module("pad").center_text('x', 3, '')


def test_strip_prefix_unchanged():
    assert _module("clean").strip_prefix('re_re_name', 're_') == 're_name'
    assert _module("clean").strip_prefix('v1.2', 'v') == '1.2'
    assert _module("clean").strip_prefix('abc', 'x') == 'abc'


def test_camel_to_snake_unchanged():
    assert _module("case").camel_to_snake('parseHttpResponse') == 'parse_http_response'
    assert _module("case").camel_to_snake('UserName') == 'user_name'


def test_longest_word_unchanged():
    assert _module("measure").longest_word('a quick brownish fox') == 'brownish'
    assert _module("measure").longest_word('hello') == 'hello'


def test_split_sentences_unchanged():
    assert _module("split").split_sentences('Hi there. How are you? Fine!') == ['Hi there.', 'How are you?', 'Fine!']


def test_indent_lines_unchanged():
    assert _module("pad").indent_lines('a\nb', '> ') == '> a\n> b'
    assert _module("pad").indent_lines('x\ny\nz', prefix='--') == '--x\n--y\n--z'
