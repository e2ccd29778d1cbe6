"""Compile a template once, render it against any number of contexts."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from minitpl.errors import UndefinedError
from minitpl.lexer import Expression, parse_expression, tokenize


class Template:
    """A compiled template. Syntax errors are raised here, undefined names by `render`."""

    def __init__(self, source: str) -> None:
        self.source = source
        self._parts: list[str | Expression] = [
            token.value if token.kind == "text" else parse_expression(token.value)
            for token in tokenize(source)
        ]

    def render(self, context: Mapping[str, Any]) -> str:
        out = []
        for part in self._parts:
            if isinstance(part, str):
                out.append(part)
            else:
                out.append(str(lookup(context, part.path)))
        return "".join(out)


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
