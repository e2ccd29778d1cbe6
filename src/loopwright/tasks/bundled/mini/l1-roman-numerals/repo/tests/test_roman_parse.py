# from_roman is looked up on the module so that, while it is missing, each test fails on its
# own instead of the whole file failing to import.
from numfmt import roman


def test_from_roman_reads_simple_numerals():
    assert roman.from_roman("XIV") == 14
    assert roman.from_roman("MMXXIV") == 2024
