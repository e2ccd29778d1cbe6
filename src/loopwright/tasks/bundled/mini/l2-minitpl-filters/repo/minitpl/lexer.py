"""Split template text into tokens and parse the expressions inside placeholders."""

from __future__ import annotations

import re
from dataclasses import dataclass

from minitpl.errors import TemplateSyntaxError

OPEN, CLOSE = "{{", "}}"
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True)
class Token:
    """`kind` is "text" (literal output) or "var" (a placeholder's expression, stripped)."""

    kind: str
    value: str
    pos: int


@dataclass(frozen=True)
class Expression:
    """A parsed placeholder: the dotted path to look up, e.g. ("user", "name")."""

    path: tuple[str, ...]


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
    """Parse a placeholder's text (`user.name`) into an Expression."""
    parts = text.strip().split(".")
    for part in parts:
        if not _NAME.fullmatch(part):
            raise TemplateSyntaxError(f"bad expression {text!r}")
    return Expression(tuple(parts))
