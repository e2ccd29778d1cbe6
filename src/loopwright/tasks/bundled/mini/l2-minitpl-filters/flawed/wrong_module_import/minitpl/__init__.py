"""minitpl: `{{ expression | filter }}` templates filled from a context mapping."""

from minitpl.errors import TemplateError, TemplateSyntaxError, UndefinedError, UnknownFilterError
from minitpl.filters import get_filter, register_filter
from minitpl.render import Template, render

__all__ = [
    "Template",
    "TemplateError",
    "TemplateSyntaxError",
    "UndefinedError",
    "UnknownFilterError",
    "get_filter",
    "register_filter",
    "render",
]
