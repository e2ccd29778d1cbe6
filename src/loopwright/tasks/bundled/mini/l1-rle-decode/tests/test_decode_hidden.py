import pytest

# decode is looked up on the module so that, while it is missing, each test fails on its own
# instead of the whole file failing to import.
from squeeze import rle


def test_characters_without_counts_stand_for_themselves():
    assert rle.decode("abc") == "abc"
    assert rle.decode("a") == "a"


def test_counts_repeat_the_following_character():
    assert rle.decode("3ab2c") == "aaabcc"
    assert rle.decode("2a2b2a") == "aabbaa"


def test_multi_digit_counts():
    assert rle.decode("12x3y") == "x" * 12 + "yyy"
    assert rle.decode("100z") == "z" * 100


def test_empty_string_decodes_to_empty():
    assert rle.decode("") == ""


def test_explicit_count_of_one_is_allowed():
    assert rle.decode("1a1b") == "ab"


def test_whitespace_and_punctuation_are_ordinary_characters():
    assert rle.decode("3 2!a") == "   !!a"
    assert rle.decode("2\n-") == "\n\n-"


def test_only_ascii_digits_are_counts():
    assert rle.decode("2²") == "²²"
    assert rle.decode("3٣") == "٣٣٣"


def test_round_trip_with_encode():
    for text in ("", "a", "aaabcc", "  hello   world  ", "ééé ü", "x" * 250 + "y", "-" * 10 + "\t"):
        assert rle.decode(rle.encode(text)) == text


@pytest.mark.parametrize("bad", ["0a", "03a", "a00b"])
def test_zero_or_zero_padded_counts_raise(bad):
    with pytest.raises(ValueError):
        rle.decode(bad)


@pytest.mark.parametrize("bad", ["3", "ab12"])
def test_count_without_a_character_raises(bad):
    with pytest.raises(ValueError):
        rle.decode(bad)
