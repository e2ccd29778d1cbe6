import importlib

import pytest


def _module(name):
    # looked up per test, so that one module failing to import fails only its own tests
    return importlib.import_module("wordsmith." + name)


def test_strip_prefix_main():
    assert _module("clean").strip_prefix('re_re_name', 're_') == 're_name'
    assert _module("clean").strip_prefix('v1.2', 'v') == '1.2'
    assert _module("clean").strip_prefix('abc', 'x') == 'abc'


def test_strip_prefix_edge_1():
    assert _module("clean").strip_prefix('Mr. Smith', 'mr. ', ignore_case=True) == 'Smith'


def test_strip_prefix_edge_2():
    assert _module("clean").strip_prefix('a_b_c', '_b') == 'a_b_c'


def test_strip_prefix_edge_3():
    assert _module("clean").strip_prefix('abc', '') == 'abc'


def test_longest_word_main():
    assert _module("measure").longest_word('a quick brownish fox') == 'brownish'
    assert _module("measure").longest_word('hello') == 'hello'


def test_longest_word_edge_1():
    assert _module("measure").longest_word('abc xyz') == 'abc'


def test_longest_word_edge_2():
    assert _module("measure").longest_word('') == ''


def test_longest_word_edge_3():
    assert _module("measure").longest_word('   ') == ''


def test_split_sentences_main():
    assert _module("split").split_sentences('Hi there. How are you? Fine!') == ['Hi there.', 'How are you?', 'Fine!']


def test_split_sentences_edge_1():
    assert _module("split").split_sentences('One. Two') == ['One.', 'Two']


def test_split_sentences_edge_2():
    assert _module("split").split_sentences('Wait... What?!') == ['Wait...', 'What?!']


def test_split_sentences_edge_3():
    assert _module("split").split_sentences('   ') == []


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


def test_collapse_spaces_unchanged():
    assert _module("clean").collapse_spaces('a   b\t\tc') == 'a b c'
    assert _module("clean").collapse_spaces('one\n\ntwo three') == 'one two three'


def test_count_vowels_unchanged():
    assert _module("measure").count_vowels('Hello World') == 3
    assert _module("measure").count_vowels('AEIOU') == 5


def test_split_pairs_unchanged():
    assert _module("split").split_pairs('a=1, b = 2') == {'a': '1', 'b': '2'}
    assert _module("split").split_pairs('x=y;z=w', sep=';') == {'x': 'y', 'z': 'w'}


def test_indent_lines_unchanged():
    assert _module("pad").indent_lines('a\nb', '> ') == '> a\n> b'
    assert _module("pad").indent_lines('x\ny\nz', prefix='--') == '--x\n--y\n--z'
