import unittest

# compare is looked up on the module so that, while it is missing, each test fails on its own
# instead of the whole file failing to import.
from semverlite import version
from semverlite.version import Version, parse


class TestCompare(unittest.TestCase):
    def assertOrdered(self, lower, higher):
        self.assertEqual(version.compare(lower, higher), -1)
        self.assertEqual(version.compare(higher, lower), 1)

    def test_core_numbers_compare_numerically(self):
        pairs = [
            ("1.0.0", "2.0.0"),
            ("2.0.0", "2.1.0"),
            ("2.1.0", "2.1.1"),
            ("1.9.0", "1.10.0"),
            ("0.0.9", "0.0.10"),
            ("1.99.99", "2.0.0"),
        ]
        for lower, higher in pairs:
            with self.subTest(lower=lower, higher=higher):
                self.assertOrdered(lower, higher)

    def test_equal_versions_compare_equal(self):
        for text in ("1.2.3", "0.0.0", "1.0.0-rc.1", "3.1.4-alpha.beta.9"):
            with self.subTest(text=text):
                self.assertEqual(version.compare(text, text), 0)

    def test_build_metadata_is_ignored(self):
        pairs = [
            ("1.0.0+build.1", "1.0.0+build.2"),
            ("1.0.0-alpha+001", "1.0.0-alpha"),
            ("1.0.0+zzz", "1.0.0"),
        ]
        for left, right in pairs:
            with self.subTest(left=left, right=right):
                self.assertEqual(version.compare(left, right), 0)

    def test_prerelease_is_lower_than_its_release(self):
        pairs = [("1.0.0-alpha", "1.0.0"), ("1.0.0-rc.9", "1.0.0"), ("2.0.0-0", "2.0.0")]
        for lower, higher in pairs:
            with self.subTest(lower=lower, higher=higher):
                self.assertOrdered(lower, higher)
        with self.subTest("a pre-release of a later version is still later"):
            self.assertOrdered("1.0.0", "1.0.1-alpha")

    def test_specification_precedence_chain(self):
        chain = [
            "1.0.0-alpha",
            "1.0.0-alpha.1",
            "1.0.0-alpha.beta",
            "1.0.0-beta",
            "1.0.0-beta.2",
            "1.0.0-beta.11",
            "1.0.0-rc.1",
            "1.0.0",
        ]
        for lower, higher in zip(chain, chain[1:]):
            with self.subTest(lower=lower, higher=higher):
                self.assertOrdered(lower, higher)

    def test_prerelease_identifier_rules(self):
        pairs = [
            ("1.0.0-9", "1.0.0-10"),  # numeric identifiers compare as numbers
            ("1.0.0-99", "1.0.0-a"),  # numeric ranks below alphanumeric
            ("1.0.0-alpha.2", "1.0.0-alpha.x"),
            ("1.0.0-Beta", "1.0.0-alpha"),  # alphanumeric compares in ASCII order
            ("1.0.0-rc.1", "1.0.0-rc.1.1"),  # more identifiers rank higher when the rest match
            ("1.0.0-a-b", "1.0.0-a-c"),
        ]
        for lower, higher in pairs:
            with self.subTest(lower=lower, higher=higher):
                self.assertOrdered(lower, higher)

    def test_accepts_version_objects_and_mixed_arguments(self):
        self.assertEqual(version.compare(parse("1.2.3"), "1.2.4"), -1)
        self.assertEqual(version.compare(Version(1, 0, 0), Version(1, 0, 0, ("alpha",))), 1)
        self.assertEqual(version.compare("2.0.0", Version(2, 0, 0, build=("b",))), 0)


class TestCompareErrors(unittest.TestCase):
    def test_invalid_version_string_raises_value_error(self):
        for text in ("1.2", "v1.2.3", "1.2.3-", "latest"):
            with self.subTest(text=text):
                with self.assertRaises(ValueError):
                    version.compare(text, "1.0.0")

    def test_other_types_raise_type_error(self):
        for value in (1, None, (1, 0, 0), 1.0):
            with self.subTest(value=value):
                with self.assertRaises(TypeError):
                    version.compare(value, "1.0.0")
                with self.assertRaises(TypeError):
                    version.compare("1.0.0", value)
