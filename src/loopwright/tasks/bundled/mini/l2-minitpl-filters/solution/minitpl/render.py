"""Compile a template once, render it against any number of contexts."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from minitpl.errors import UndefinedError
from minitpl.filters import Filter, get_filter
from minitpl.lexer import Expression, parse_expression, tokenize


@dataclass(frozen=True)
class _Placeholder:
    """An expression with its filters resolved: (function, argument or None) pairs."""

    expression: Expression
    filters: tuple[tuple[Filter, Any], ...]

    @property
    def tolerates_undefined(self) -> bool:
        calls = self.expression.filters
        return bool(calls) and calls[0].name == "default"


class Template:
    """A compiled template.

    Syntax errors and unknown filters are raised here, undefined names by `render`.
    """

    def __init__(self, source: str) -> None:
        self.source = source
        self._parts: list[str | _Placeholder] = [
            token.value if token.kind == "text" else _compile(token.value)
            for token in tokenize(source)
        ]

    def render(self, context: Mapping[str, Any]) -> str:
        out = []
        for part in self._parts:
            if isinstance(part, str):
                out.append(part)
            else:
                out.append(str(_evaluate(part, context)))
        return "".join(out)


def _compile(text: str) -> _Placeholder:
    expression = parse_expression(text)
    filters = tuple((get_filter(call.name), call.arg) for call in expression.filters)
    return _Placeholder(expression, filters)


def _evaluate(placeholder: _Placeholder, context: Mapping[str, Any]) -> Any:
    try:
        value = lookup(context, placeholder.expression.path)
    except UndefinedError:
        if not placeholder.tolerates_undefined:
            raise
        value = None
    for func, arg in placeholder.filters:
        value = func(value) if arg is None else func(value, arg)
    return value


def lookup(context: Mapping[str, Any], path: tuple[str, ...]) -> Any:
    """Follow a dotted path: mapping keys first, then attributes. UndefinedError if missing."""
    value: Any = context
    for i, name in enumerate(path):
        if isinstance(value, Mapping) and name in value:
            value = value[name]
        elif not isinstance(value, Mapping) and hasattr(value, name):
            value = getattr(value, name)
        else:
            raise UndefinedError(f"{'.'.join(path[: i + 1])} is undefined")
    return value


def render(source: str, context: Mapping[str, Any]) -> str:
    """Compile and render in one step."""
    return Template(source).render(context)
