import unittest

from minitpl import render


class FiltersBasicTest(unittest.TestCase):
    def test_upper_and_chaining(self):
        self.assertEqual(render("{{ name | upper }}", {"name": "ada"}), "ADA")
        self.assertEqual(render("{{ name|trim|title }}", {"name": "  ada lovelace "}), "Ada Lovelace")
