"""Exceptions raised by minitpl."""


class TemplateError(Exception):
    """Base class for every minitpl error."""


class TemplateSyntaxError(TemplateError):
    """The template text is malformed (raised when a Template is created)."""


class UndefinedError(TemplateError):
    """An expression names something the context does not have (raised when rendering)."""


class UnknownFilterError(TemplateError):
    """A template uses a filter that is not registered (raised when a Template is created)."""
