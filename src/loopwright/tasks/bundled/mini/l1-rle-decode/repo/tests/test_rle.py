import pytest

from squeeze.rle import encode, runs


def test_runs_groups_repeated_characters():
    assert runs("aaabcc") == [("a", 3), ("b", 1), ("c", 2)]
    assert runs("") == []


def test_encode_writes_counts_only_for_repeats():
    assert encode("aaabcc") == "3ab2c"
    assert encode("x" * 12 + " ") == "12x "
    assert encode("") == ""


def test_encode_rejects_ascii_digits():
    with pytest.raises(ValueError):
        encode("room 101")
