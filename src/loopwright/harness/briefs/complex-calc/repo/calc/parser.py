"""The evaluator: recursive descent over calc.lexer's tokens."""

from collections.abc import Mapping

from calc.errors import CalcError  # noqa: F401  (for the finished module)
from calc.lexer import tokenize  # noqa: F401  (for the finished module)


def evaluate(expression: str, variables: Mapping[str, float] | None = None) -> float:
    """The value of expression; CalcError when it cannot be evaluated."""
    raise NotImplementedError
