"""The one error type of calc."""


class CalcError(Exception):
    """An expression that cannot be evaluated: bad syntax, unknown name, division by zero."""
