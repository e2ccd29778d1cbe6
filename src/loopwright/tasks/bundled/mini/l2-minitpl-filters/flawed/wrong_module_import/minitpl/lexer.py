"""Split template text into tokens and parse the expressions inside placeholders."""

from __future__ import annotations

import re
from dataclasses import dataclass

from minitpl.errors import TemplateSyntaxError

OPEN, CLOSE = "{{", "}}"
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# One filter segment: `name` or `name:arg`, where arg is "a string" or an integer.
_FILTER = re.compile(r'\s*([A-Za-z_][A-Za-z0-9_]*)\s*(?::\s*("[^"]*"|-?\d+))?\s*')


@dataclass(frozen=True)
class Token:
    """`kind` is "text" (literal output) or "var" (a placeholder's expression, stripped)."""

    kind: str
    value: str
    pos: int


@dataclass(frozen=True)
class FilterCall:
    """One `| name` or `| name:arg` of an expression; `arg` is None when there is none."""

    name: str
    arg: str | int | None = None


@dataclass(frozen=True)
class Expression:
    """A parsed placeholder: the dotted path to look up, e.g. ("user", "name"), and its filters."""

    path: tuple[str, ...]
    filters: tuple[FilterCall, ...] = ()


def tokenize(source: str) -> list[Token]:
    """Text and placeholder tokens, in order. Unclosed or empty placeholders are errors."""
    tokens: list[Token] = []
    pos = 0
    while True:
        start = source.find(OPEN, pos)
        if start == -1:
            if pos < len(source):
                tokens.append(Token("text", source[pos:], pos))
            return tokens
        if start > pos:
            tokens.append(Token("text", source[pos:start], pos))
        end = source.find(CLOSE, start + len(OPEN))
        if end == -1:
            raise TemplateSyntaxError(f"unclosed {OPEN} at position {start}")
        inner = source[start + len(OPEN) : end].strip()
        if not inner:
            raise TemplateSyntaxError(f"empty placeholder at position {start}")
        tokens.append(Token("var", inner, start))
        pos = end + len(CLOSE)


def parse_expression(text: str) -> Expression:
    """Parse a placeholder's text (`user.name | truncate:10`) into an Expression."""
    head, *segments = _split_pipes(text)
    parts = head.strip().split(".")
    for part in parts:
        if not _NAME.fullmatch(part):
            raise TemplateSyntaxError(f"bad expression {text!r}")
    return Expression(tuple(parts), tuple(_parse_filter(s, text) for s in segments))


def _split_pipes(text: str) -> list[str]:
    """Split on `|`, except inside double-quoted strings."""
    parts, current, quoted = [], [], False
    for ch in text:
        if ch == '"':
            quoted = not quoted
        if ch == "|" and not quoted:
            parts.append("".join(current))
            current = []
        else:
            current.append(ch)
    parts.append("".join(current))
    return parts


def _parse_filter(segment: str, text: str) -> FilterCall:
    match = _FILTER.fullmatch(segment)
    if match is None:
        raise TemplateSyntaxError(f"bad filter {segment.strip()!r} in {text!r}")
    name, arg = match.groups()
    if arg is None:
        return FilterCall(name)
    if arg.startswith('"'):
        return FilterCall(name, arg[1:-1])
    return FilterCall(name, int(arg))
