"""The tokenizer: an expression string to a list of tokens."""

import re
from dataclasses import dataclass

from calc.errors import CalcError

_TOKEN = re.compile(r"\s*(?:(\d+\.\d+|\d+)|([A-Za-z_][A-Za-z_0-9]*)|(\*\*|//|[-+*/%()]))")


@dataclass(frozen=True)
class Token:
    """kind is 'number', 'name', 'op' or 'end'; text is the token as written."""

    kind: str
    text: str
    position: int


def tokenize(expression: str) -> list[Token]:
    """The tokens of expression, ending with one 'end' token. CalcError on a bad character."""
    tokens: list[Token] = []
    position = 0
    while True:
        while position < len(expression) and expression[position].isspace():
            position += 1
        if position == len(expression):
            tokens.append(Token("end", "", position))
            return tokens
        match = _TOKEN.match(expression, position)
        if match is None:
            raise CalcError(f"unexpected character {expression[position]!r} at {position}")
        number, name, op = match.groups()
        kind = "number" if number else "name" if name else "op"
        tokens.append(Token(kind, number or name or op, match.start(match.lastindex or 0)))
        position = match.end()
