import importlib
import unittest

from minitpl import Template, TemplateError, TemplateSyntaxError, UndefinedError, errors, lexer, render


class BuiltinFiltersTest(unittest.TestCase):
    def check(self, cases):
        for source, context, expected in cases:
            with self.subTest(source=source, context=context):
                self.assertEqual(render(source, context), expected)

    def test_case_and_whitespace_filters(self):
        self.check([
            ("{{ s | upper }}", {"s": "MiXed"}, "MIXED"),
            ("{{ s | lower }}", {"s": "MiXed"}, "mixed"),
            ("{{ s | title }}", {"s": "ada lovelace"}, "Ada Lovelace"),
            ("[{{ s | trim }}]", {"s": "  padded \n"}, "[padded]"),
            ("{{ n | upper }}", {"n": 7}, "7"),
        ])

    def test_length_and_truncate(self):
        self.check([
            ("{{ xs | length }}", {"xs": [1, 2, 3]}, "3"),
            ("{{ s | length }}", {"s": "four"}, "4"),
            ("{{ s | truncate:5 }}", {"s": "abcdefgh"}, "abcde..."),
            ("{{ s | truncate:5 }}", {"s": "abcde"}, "abcde"),
            ("{{ s | truncate: 0 }}", {"s": "abc"}, "..."),
        ])

    def test_join_with_default_and_quoted_separators(self):
        self.check([
            ("{{ xs | join }}", {"xs": ["a", 1, None]}, "a, 1, None"),
            ('{{ xs | join:"-" }}', {"xs": ["a", "b"]}, "a-b"),
            ('{{ xs | join:" | " }}', {"xs": ["a", "b", "c"]}, "a | b | c"),
            ('{{ xs | join:": " | upper }}', {"xs": ["a", "b"]}, "A: B"),
        ])

    def test_filters_apply_left_to_right(self):
        self.check([
            ("{{ s | trim | length }}", {"s": "  ab  "}, "2"),
            ("{{ s | truncate:2 | length }}", {"s": "abcdef"}, "5"),
            ('{{ xs | join:"" | upper | truncate:3 }}', {"xs": ["ab", "cd"]}, "ABC..."),
        ])

    def test_default_filter(self):
        self.check([
            ('{{ v | default:"n/a" }}', {"v": None}, "n/a"),
            ('{{ v | default:"n/a" }}', {"v": ""}, "n/a"),
            ('{{ v | default:"n/a" }}', {}, "n/a"),
            ('{{ user.email | default:"none" | upper }}', {"user": {}}, "NONE"),
            ('{{ v | default:"n/a" }}', {"v": 0}, "0"),
            ('{{ v | default:"n/a" }}', {"v": "set"}, "set"),
            ("[{{ v | default }}]", {}, "[]"),
        ])


class FilterErrorsTest(unittest.TestCase):
    def test_undefined_without_leading_default_still_raises(self):
        for source in ("{{ missing | upper }}", '{{ missing | upper | default:"x" }}'):
            with self.subTest(source=source):
                with self.assertRaises(UndefinedError):
                    Template(source).render({})

    def test_unknown_filter_raises_when_compiling(self):
        self.assertTrue(issubclass(errors.UnknownFilterError, TemplateError))
        for source, name in (("{{ s | shout }}", "shout"), ("{{ s | upper | nope:3 }}", "nope")):
            with self.subTest(source=source):
                with self.assertRaises(errors.UnknownFilterError) as caught:
                    Template(source)
                self.assertIn(repr(name), str(caught.exception))

    def test_malformed_filters_are_syntax_errors(self):
        Template("{{ s|truncate: 2 |upper }}")  # well-formed: compiles without error
        for source in (
            "{{ s | }}",
            "{{ s || upper }}",
            "{{ | upper }}",
            "{{ s | truncate:abc }}",
            '{{ s | join:"x }}',
            "{{ s | 9up }}",
            "{{ s | truncate:2:3 }}",
        ):
            with self.subTest(source=source):
                with self.assertRaises(TemplateSyntaxError):
                    Template(source)


class FilterApiTest(unittest.TestCase):
    def setUp(self):
        self.filters = importlib.import_module("minitpl.filters")
        saved = dict(self.filters.FILTERS)

        def restore():
            self.filters.FILTERS.clear()
            self.filters.FILTERS.update(saved)

        self.addCleanup(restore)

    def test_parse_expression_returns_filter_calls(self):
        FilterCall = lexer.FilterCall
        parsed = lexer.parse_expression(' user.name | truncate:5 | join:", " |upper ')
        self.assertEqual(parsed.path, ("user", "name"))
        self.assertEqual(
            parsed.filters,
            (FilterCall("truncate", 5), FilterCall("join", ", "), FilterCall("upper")),
        )
        self.assertEqual(lexer.parse_expression("a.b").filters, ())
        self.assertEqual(lexer.parse_expression("n | truncate:-1").filters, (FilterCall("truncate", -1),))

    def test_register_filter_as_decorator_and_directly(self):
        @self.filters.register_filter("shout")
        def shout(value, marks=1):
            return str(value).upper() + "!" * marks

        self.assertEqual(shout("x"), "X!")
        self.filters.register_filter("reverse", lambda value: str(value)[::-1])
        self.assertIs(self.filters.get_filter("shout"), shout)
        self.assertEqual(render("{{ s | shout:3 }} {{ s | reverse }}", {"s": "abc"}), "ABC!!! cba")

    def test_register_filter_rejects_bad_names_and_get_filter_unknown(self):
        for name in ("", "two words", "9lives", "a-b"):
            with self.subTest(name=name):
                with self.assertRaises(ValueError):
                    self.filters.register_filter(name, str)
        with self.assertRaises(errors.UnknownFilterError):
            self.filters.get_filter("does_not_exist")
