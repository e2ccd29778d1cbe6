"""minitpl: `{{ expression }}` templates filled from a context mapping."""

from minitpl.errors import TemplateError, TemplateSyntaxError, UndefinedError
from minitpl.render import Template, render

__all__ = ["Template", "TemplateError", "TemplateSyntaxError", "UndefinedError", "render"]
