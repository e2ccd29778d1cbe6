"""The evaluator: recursive descent over calc.lexer's tokens."""

from collections.abc import Mapping

from calc.errors import CalcError
from calc.lexer import Token, tokenize


class _Parser:
    def __init__(self, tokens: list[Token], variables: Mapping[str, float]) -> None:
        self.tokens = tokens
        self.index = 0
        self.variables = variables

    def peek(self) -> Token:
        return self.tokens[self.index]

    def take(self) -> Token:
        token = self.tokens[self.index]
        self.index += 1
        return token

    def expression(self) -> float:
        value = self.term()
        while self.peek().text in ("+", "-"):
            op = self.take().text
            right = self.term()
            value = value + right if op == "+" else value - right
        return value

    def term(self) -> float:
        value = self.unary()
        while self.peek().text in ("*", "/", "//", "%"):
            op = self.take().text
            right = self.unary()
            if op == "*":
                value = value * right
            elif right == 0:
                raise CalcError(f"division by zero ({op})")
            elif op == "/":
                value = value / right
            elif op == "//":
                value = value // right
            else:
                value = value % right
        return value

    def unary(self) -> float:
        if self.peek().text in ("-", "+"):
            op = self.take().text
            value = self.unary()
            return -value if op == "-" else value
        return self.power()

    def power(self) -> float:
        base = self.atom()
        if self.peek().text == "**":
            self.take()
            exponent = self.unary()
            try:
                return base**exponent
            except ZeroDivisionError:
                raise CalcError("zero to a negative power") from None
        return base

    def atom(self) -> float:
        token = self.take()
        if token.kind == "number":
            return float(token.text) if "." in token.text else int(token.text)
        if token.kind == "name":
            if token.text not in self.variables:
                raise CalcError(f"unknown variable {token.text!r}")
            return self.variables[token.text]
        if token.text == "(":
            value = self.expression()
            if self.take().text != ")":
                raise CalcError("missing closing parenthesis")
            return value
        raise CalcError(f"unexpected {token.text or 'end of expression'!r} at {token.position}")


def evaluate(expression: str, variables: Mapping[str, float] | None = None) -> float:
    """The value of expression; CalcError when it cannot be evaluated."""
    parser = _Parser(tokenize(expression), variables or {})
    value = parser.expression()
    if parser.peek().kind != "end":
        token = parser.peek()
        raise CalcError(f"unexpected {token.text!r} at {token.position}")
    return value
