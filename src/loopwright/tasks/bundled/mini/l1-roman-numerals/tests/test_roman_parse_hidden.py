import unittest

# from_roman is looked up on the module so that, while it is missing, each test fails on its
# own instead of the whole file failing to import.
from numfmt import roman


class TestFromRoman(unittest.TestCase):
    def test_single_symbols(self):
        symbols = {"I": 1, "V": 5, "X": 10, "L": 50, "C": 100, "D": 500, "M": 1000}
        for numeral, value in symbols.items():
            self.assertEqual(roman.from_roman(numeral), value)

    def test_subtractive_pairs(self):
        pairs = {"IV": 4, "IX": 9, "XL": 40, "XC": 90, "CD": 400, "CM": 900}
        for numeral, value in pairs.items():
            self.assertEqual(roman.from_roman(numeral), value)

    def test_composite_numbers(self):
        self.assertEqual(roman.from_roman("MCMXCIV"), 1994)
        self.assertEqual(roman.from_roman("CDXLIV"), 444)
        self.assertEqual(roman.from_roman("MMMCMXCIX"), 3999)
        self.assertEqual(roman.from_roman("LXXXVIII"), 88)

    def test_lowercase_and_mixed_case_are_accepted(self):
        self.assertEqual(roman.from_roman("xiv"), 14)
        self.assertEqual(roman.from_roman("mCmXcIv"), 1994)

    def test_round_trip_with_to_roman(self):
        for number in range(roman.MIN_VALUE, roman.MAX_VALUE + 1):
            self.assertEqual(roman.from_roman(roman.to_roman(number)), number)


class TestFromRomanErrors(unittest.TestCase):
    def test_empty_string_raises(self):
        with self.assertRaises(ValueError):
            roman.from_roman("")

    def test_unknown_characters_raise(self):
        for text in ("ABC", "X I", " XI", "XI\n", "12", "XIV."):
            with self.assertRaises(ValueError, msg=repr(text)):
                roman.from_roman(text)

    def test_non_canonical_forms_raise(self):
        for text in ("IIII", "VV", "IC", "IIV", "XM", "VX", "MMMM", "CCCC", "LL"):
            with self.assertRaises(ValueError, msg=repr(text)):
                roman.from_roman(text)

    def test_non_string_raises_type_error(self):
        for value in (12, None, b"XII", ["X"]):
            with self.assertRaises(TypeError, msg=repr(value)):
                roman.from_roman(value)


if __name__ == "__main__":
    unittest.main()
