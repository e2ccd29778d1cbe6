import pytest

from numfmt.roman import to_roman


def test_to_roman_uses_canonical_form():
    assert to_roman(4) == "IV"
    assert to_roman(1994) == "MCMXCIV"
    assert to_roman(3999) == "MMMCMXCIX"


def test_to_roman_rejects_out_of_range_and_non_int():
    with pytest.raises(ValueError):
        to_roman(0)
    with pytest.raises(ValueError):
        to_roman(4000)
    with pytest.raises(TypeError):
        to_roman(2.0)
