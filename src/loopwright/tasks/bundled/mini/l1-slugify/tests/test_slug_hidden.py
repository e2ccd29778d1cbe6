import pytest

# slugify is looked up on the module so that, while it is missing, each test fails on its own
# instead of the whole file failing to import.
from textkit import transform


def test_words_are_lowercased_and_joined():
    assert transform.slugify("Hello World") == "hello-world"
    assert transform.slugify("  Multiple   spaces\tand\ttabs  ") == "multiple-spaces-and-tabs"


def test_punctuation_runs_become_one_separator():
    assert transform.slugify("C++ & Rust -- a comparison!") == "c-rust-a-comparison"
    assert transform.slugify("---already-slugged---") == "already-slugged"


def test_accented_letters_are_folded_to_ascii():
    assert transform.slugify("Crème Brûlée à la carte") == "creme-brulee-a-la-carte"
    assert transform.slugify("Ångström Über Niño") == "angstrom-uber-nino"


def test_apostrophes_are_dropped_not_separated():
    assert transform.slugify("Don't stop") == "dont-stop"
    assert transform.slugify("It’s the user’s choice") == "its-the-users-choice"


def test_digits_are_kept():
    assert transform.slugify("Python 3.11 release notes") == "python-3-11-release-notes"


def test_custom_separator():
    assert transform.slugify("Hello World", separator="_") == "hello_world"
    assert transform.slugify("Hello big World", separator="--") == "hello--big--world"


def test_empty_and_symbol_only_input_give_empty_slug():
    assert transform.slugify("") == ""
    assert transform.slugify("!!! ??? ...") == ""
    assert transform.slugify("日本語") == ""


def test_max_length_keeps_whole_words():
    assert transform.slugify("The quick brown fox", max_length=15) == "the-quick-brown"
    assert transform.slugify("The quick brown fox", max_length=14) == "the-quick"
    assert transform.slugify("The quick brown fox", max_length=100) == "the-quick-brown-fox"


def test_max_length_cuts_an_overlong_first_word():
    assert transform.slugify("Supercalifragilistic word", max_length=5) == "super"


def test_invalid_arguments_raise_value_error():
    with pytest.raises(ValueError):
        transform.slugify("text", max_length=0)
    with pytest.raises(ValueError):
        transform.slugify("text", separator="")
