import unittest
from types import SimpleNamespace

from minitpl import Template, TemplateSyntaxError, UndefinedError, render


class RenderTest(unittest.TestCase):
    def test_text_and_variables(self):
        self.assertEqual(render("Hi {{name}}, {{ n }}!", {"name": "Ada", "n": 3}), "Hi Ada, 3!")
        self.assertEqual(render("no placeholders", {}), "no placeholders")

    def test_dotted_paths_use_keys_then_attributes(self):
        ctx = {"user": {"name": "Ada"}, "obj": SimpleNamespace(size=2)}
        self.assertEqual(render("{{ user.name }}/{{ obj.size }}", ctx), "Ada/2")

    def test_undefined_names(self):
        template = Template("{{ user.email }}")
        with self.assertRaises(UndefinedError) as caught:
            template.render({"user": {"name": "Ada"}})
        self.assertIn("user.email", str(caught.exception))

    def test_syntax_errors_raised_at_compile_time(self):
        for source in ("{{ name", "{{ }}", "{{ 9lives }}", "{{ a..b }}"):
            with self.subTest(source=source):
                with self.assertRaises(TemplateSyntaxError):
                    Template(source)
